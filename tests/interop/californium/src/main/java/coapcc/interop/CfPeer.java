package coapcc.interop;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.nio.file.Files;
import java.nio.file.Path;

import org.eclipse.californium.core.CoapClient;
import org.eclipse.californium.core.CoapResource;
import org.eclipse.californium.core.CoapResponse;
import org.eclipse.californium.core.CoapServer;
import org.eclipse.californium.core.coap.CoAP.Code;
import org.eclipse.californium.core.coap.CoAP.ResponseCode;
import org.eclipse.californium.core.coap.Request;
import org.eclipse.californium.core.config.CoapConfig;
import org.eclipse.californium.core.network.CoapEndpoint;
import org.eclipse.californium.core.server.resources.CoapExchange;
import org.eclipse.californium.elements.config.Configuration;
import org.eclipse.californium.elements.config.UdpConfig;

/**
 * A Californium peer for coapcc's interoperability tests, with Californium's default
 * configuration (block-wise transfer above 1,024-byte messages, in 512-byte blocks).
 *
 * <pre>
 * cf-peer server PORT                  serve on 127.0.0.1:PORT; prints "ready" when bound
 *   /test   GET: the reference workload's 60-byte payload
 *   /echo   POST or PUT: 2.04 with the request's payload
 *   /large  GET: 2,000 printable bytes ('a'..'z' repeated)
 * cf-peer client METHOD URI [FILE]     one request (payload: FILE's bytes); the response's
 *                                      payload on stdout, its code on stderr; exit 0 on 2.xx,
 *                                      1 on another code, 2 on no response within 30 s
 * cf-peer load URI CLIENTS EXCHANGES FIRST
 *                                      CLIENTS clients, client i on its own endpoint bound to
 *                                      the IPv4 address FIRST + i, each EXCHANGES GETs one after
 *                                      the other (CON, Californium's default RTO and
 *                                      retransmissions); prints "fct_s SECONDS" for each client
 *                                      whose last exchange was answered (first request to last
 *                                      response), then "failed N" (exchanges without a response)
 * </pre>
 */
public final class CfPeer {
    static {
        CoapConfig.register();
        UdpConfig.register();
    }

    private static byte[] large() {
        byte[] b = new byte[2000];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ('a' + i % 26);
        }
        return b;
    }

    private static CoapEndpoint endpoint(Configuration cfg, int port) {
        return new CoapEndpoint.Builder()
                .setConfiguration(cfg)
                .setInetSocketAddress(new InetSocketAddress("127.0.0.1", port))
                .build();
    }

    private static void server(Configuration cfg, int port) throws Exception {
        CoapServer server = new CoapServer(cfg);
        server.addEndpoint(endpoint(cfg, port));
        server.add(new CoapResource("test") {
            @Override
            public void handleGET(CoapExchange ex) {
                ex.respond(ResponseCode.CONTENT, "x".repeat(60));
            }
        });
        server.add(new CoapResource("echo") {
            @Override
            public void handlePOST(CoapExchange ex) {
                ex.respond(ResponseCode.CHANGED, ex.getRequestPayload());
            }

            @Override
            public void handlePUT(CoapExchange ex) {
                ex.respond(ResponseCode.CHANGED, ex.getRequestPayload());
            }
        });
        server.add(new CoapResource("large") {
            @Override
            public void handleGET(CoapExchange ex) {
                ex.respond(ResponseCode.CONTENT, large());
            }
        });
        server.start();
        System.out.println("ready");
        System.out.flush();
        Thread.currentThread().join();
    }

    private static int client(Configuration cfg, String method, String uri, String file) throws Exception {
        Request req = new Request(Code.valueOf(method.toUpperCase()));
        req.setURI(uri);
        if (file != null) {
            req.setPayload(Files.readAllBytes(Path.of(file)));
        }
        CoapClient client = new CoapClient(uri);
        client.setEndpoint(endpoint(cfg, 0));
        client.setTimeout(30_000L);
        CoapResponse r = client.advanced(req);
        if (r == null) {
            System.err.println("no response from " + uri);
            return 2;
        }
        System.err.println(r.getCode() + " " + r.getCode().name());
        OutputStream out = System.out;
        out.write(r.getPayload());
        out.flush();
        return r.isSuccess() ? 0 : 1;
    }

    private static int load(Configuration cfg, String uri, int clients, int exchanges, String first) throws Exception {
        int base = ByteBuffer.wrap(InetAddress.getByName(first).getAddress()).getInt();
        double[] fct = new double[clients];
        AtomicInteger failed = new AtomicInteger();
        Thread[] threads = new Thread[clients];
        for (int i = 0; i < clients; i++) {
            InetAddress local = InetAddress.getByAddress(ByteBuffer.allocate(4).putInt(base + i).array());
            CoapClient c = new CoapClient(uri);
            c.setEndpoint(new CoapEndpoint.Builder().setConfiguration(cfg)
                    .setInetSocketAddress(new InetSocketAddress(local, 0)).build());
            c.setTimeout(3_600_000L);
            int k = i;
            fct[k] = -1;
            threads[i] = new Thread(() -> {
                long t0 = System.nanoTime();
                boolean last = false;
                for (int e = 0; e < exchanges; e++) {
                    try {
                        CoapResponse r = c.get();
                        last = r != null;
                    } catch (Exception ex) {
                        last = false;
                    }
                    if (!last) {
                        failed.incrementAndGet();
                    }
                }
                if (last) {
                    fct[k] = (System.nanoTime() - t0) / 1e9;
                }
                c.shutdown();
            });
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (double f : fct) {
            if (f >= 0) {
                System.out.println("fct_s " + f);
            }
        }
        System.out.println("failed " + failed.get());
        return 0;
    }

    public static void main(String[] args) throws Exception {
        Configuration cfg = Configuration.createStandardWithoutFile();
        int code;
        if (args.length == 2 && args[0].equals("server")) {
            server(cfg, Integer.parseInt(args[1]));
            code = 0;
        } else if ((args.length == 3 || args.length == 4) && args[0].equals("client")) {
            code = client(cfg, args[1], args[2], args.length == 4 ? args[3] : null);
        } else if (args.length == 5 && args[0].equals("load")) {
            code = load(cfg, args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), args[4]);
        } else {
            System.err.println("usage: cf-peer server PORT | cf-peer client METHOD URI [FILE] | cf-peer load URI CLIENTS EXCHANGES FIRST");
            code = 64;
        }
        System.exit(code);
    }
}
