//! `coap://host[:port]/path?query` → socket address, Uri-Path and Uri-Query options.

use std::net::SocketAddr;

use coap_wire::registry;

/// A parsed CoAP URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoapUri {
    /// Where to send.
    pub addr: SocketAddr,
    /// Uri-Path and Uri-Query options, in order.
    pub options: Vec<(u16, Vec<u8>)>,
    /// `coap+tcp://`: CoAP over TCP (RFC 8323).
    pub tcp: bool,
}

/// Parses and resolves a `coap://` URI (default port 5683).
pub async fn parse(text: &str) -> Result<CoapUri, String> {
    let url = url::Url::parse(text).map_err(|e| format!("'{text}' is not a URI: {e}"))?;
    let tcp = match url.scheme() {
        "coap" => false,
        "coap+tcp" => true,
        _ => return Err(format!("'{text}': only coap:// and coap+tcp:// URIs are supported")),
    };
    let host = url.host_str().ok_or_else(|| format!("'{text}' has no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port().unwrap_or(5683);
    let addr = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} has no address"))?;
    let mut options = Vec::new();
    if let Some(segments) = url.path_segments() {
        for seg in segments.filter(|s| !s.is_empty()) {
            let seg = percent_decode(seg);
            options.push((registry::URI_PATH, seg));
        }
    }
    if let Some(q) = url.query() {
        for part in q.split('&').filter(|s| !s.is_empty()) {
            options.push((registry::URI_QUERY, percent_decode(part)));
        }
    }
    Ok(CoapUri { addr, options, tcp })
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parses_paths_queries_and_ports() {
        let u = parse("coap://127.0.0.1:5699/a/b%20c?x=1&y").await.unwrap();
        assert_eq!(u.addr, "127.0.0.1:5699".parse().unwrap());
        assert_eq!(
            u.options,
            vec![(11, b"a".to_vec()), (11, b"b c".to_vec()), (15, b"x=1".to_vec()), (15, b"y".to_vec())]
        );
        assert_eq!(parse("coap://[::1]/test").await.unwrap().addr, "[::1]:5683".parse().unwrap());
        assert!(parse("http://x/").await.unwrap_err().contains("only coap://"));
        assert!(parse("coap+tcp://127.0.0.1/a").await.unwrap().tcp);
        assert!(parse("nonsense").await.is_err());
    }
}
