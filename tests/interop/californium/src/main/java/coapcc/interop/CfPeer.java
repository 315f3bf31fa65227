package coapcc.interop;

import java.io.OutputStream;
import java.net.InetSocketAddress;
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

    public static void main(String[] args) throws Exception {
        Configuration cfg = Configuration.createStandardWithoutFile();
        int code;
        if (args.length == 2 && args[0].equals("server")) {
            server(cfg, Integer.parseInt(args[1]));
            code = 0;
        } else if ((args.length == 3 || args.length == 4) && args[0].equals("client")) {
            code = client(cfg, args[1], args[2], args.length == 4 ? args[3] : null);
        } else {
            System.err.println("usage: cf-peer server PORT | cf-peer client METHOD URI [FILE]");
            code = 64;
        }
        System.exit(code);
    }
}
