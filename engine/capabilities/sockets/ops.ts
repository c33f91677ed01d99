/**
 * The operations between a function's TCP sockets in the sandbox (guest/net.ts: Node's net and
 * tls; guest/connect.ts: the Workers API of `cloudflare:sockets`) and their host half (host.ts over
 * the instance's table of connections, connections.ts). The guest reads a socket a chunk at a time
 * (`tcpRead`, as fetch's bodies are read), and each `tcpWrite` answers once its bytes are handed to
 * the kernel: both directions' backpressure crosses as the answers' timing. The guests import
 * types only.
 */
import { array, boolean, count, object, optional, string, type Infer } from '../schema';

/** TLS as a socket asks for it: the host does the TLS, with its own defaults for all the rest. */
const tlsOptions = object({
  /** The name the certificate must hold (SNI); the connection's host name by default. */
  servername: optional(string()),
  /** false to accept any certificate (Node's option, for this connection only); verified otherwise. */
  rejectUnauthorized: optional(boolean()),
  /** Certificates (PEM) to trust for this connection instead of the host's CA list. */
  ca: optional(array(string())),
  /** ALPN protocol names to offer. */
  alpn: optional(array(string())),
});

/** TLS as a function's socket asks for it. */
export type TlsRequest = Infer<typeof tlsOptions>;

export const SOCKET_OPS = {
  /** Opens a connection to `hostname:port` through the egress rules; answers a SocketOpened. */
  tcpConnect: object({ hostname: string(), port: count(), tls: optional(tlsOptions) }),
  /** The socket's next bytes (the answer's body), or `{"done":true}` once the peer ended its side. */
  tcpRead: object({ id: count() }),
  /** Sends the operation's bytes; answers once they are handed on. */
  tcpWrite: object({ id: count() }),
  /** Ends the socket's sending side (a FIN) once what was written is sent. */
  tcpEnd: object({ id: count() }),
  /** Closes the socket at once. */
  tcpClose: object({ id: count() }),
  /** Starts TLS on an open socket (STARTTLS: pg's SSLRequest, `startTls()`); answers a SocketOpened. */
  tcpUpgrade: object({ id: count(), tls: tlsOptions }),
};

/** What `tcpConnect` and `tcpUpgrade` answer. */
export interface SocketOpened {
  id: number;
  remoteAddress: string;
  remotePort: number;
  remoteFamily: string;
  localAddress: string;
  localPort: number;
  /** With TLS: the protocol ALPN chose (false for none) and whether the certificate was verified. */
  alpnProtocol?: string | false;
  authorized?: boolean;
}
