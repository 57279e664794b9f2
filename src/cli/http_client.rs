//! A small blocking HTTP/1.1 client over one keep-alive connection, enough
//! to talk to the playground server in tests and in the benchmark (no
//! TLS, no redirects; `Content-Length` and chunked bodies).
// One file for two users: `serve --bench` (here) and the server tests
// (`tests/serve_api.rs` includes it by path); each uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

/// A connection to one server.
pub struct Client {
    /// The `Host` header sent; default the address.
    host: String,
    reader: BufReader<TcpStream>,
}

fn invalid(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into())
}

impl Client {
    /// Connects, with `timeout` on every read and write.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> std::io::Result<Client> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        Ok(Client {
            host: addr.to_string(),
            reader: BufReader::new(stream),
        })
    }

    /// Sends `host` as the `Host` header from now on.
    pub fn set_host(&mut self, host: &str) {
        self.host = host.to_string();
    }

    /// `GET path`.
    pub fn get(&mut self, path: &str) -> std::io::Result<Response> {
        self.request("GET", path, None)
    }

    /// `POST path` with a JSON body.
    pub fn post_json(&mut self, path: &str, body: &[u8]) -> std::io::Result<Response> {
        self.request("POST", path, Some(("application/json", body)))
    }

    /// Sends one request and reads its response. A body the server refuses
    /// early (413) may not be written out in full; the response is read all
    /// the same.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
    ) -> std::io::Result<Response> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.host);
        if let Some((ctype, b)) = body {
            head.push_str(&format!(
                "Content-Type: {ctype}\r\nContent-Length: {}\r\n",
                b.len()
            ));
        }
        head.push_str("\r\n");
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes())?;
        if let Some((_, b)) = body {
            // The server may answer before reading it all: keep the error
            // and read the answer first.
            let written = stream.write_all(b);
            match self.read_response() {
                Ok(r) => return Ok(r),
                Err(e) => return Err(written.err().unwrap_or(e)),
            }
        }
        self.read_response()
    }

    fn read_line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        let n = (&mut self.reader).take(64 * 1024).read_line(&mut line)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }

    fn read_response(&mut self) -> std::io::Result<Response> {
        let status_line = self.read_line()?;
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid(format!("bad status line '{status_line}'")))?;
        let mut headers = Vec::new();
        loop {
            let line = self.read_line()?;
            if line.is_empty() {
                break;
            }
            let (n, v) = line
                .split_once(':')
                .ok_or_else(|| invalid(format!("bad header '{line}'")))?;
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let find = |n: &str| headers.iter().find(|(h, _)| h == n).map(|(_, v)| v.clone());
        let mut body = Vec::new();
        if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            loop {
                let size_line = self.read_line()?;
                let size =
                    usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(|_| invalid(format!("bad chunk size '{size_line}'")))?;
                if size == 0 {
                    // Trailers, then the empty line.
                    while !self.read_line()?.is_empty() {}
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                self.reader.read_exact(&mut body[start..])?;
                self.read_line()?;
            }
        } else if let Some(len) = find("content-length") {
            let len: usize = len
                .parse()
                .map_err(|_| invalid(format!("bad content-length '{len}'")))?;
            body.resize(len, 0);
            self.reader.read_exact(&mut body)?;
        }
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}
