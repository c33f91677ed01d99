# Outbound HTTP for Python functions. The interpreter has no network: a connected socket here
# collects the HTTP request written to it, hands it to the host, which sends it through islet's
# guarded egress (the one node8's fetch uses: no private, loopback or link-local addresses but the
# islet server itself, the response size limit, a timeout bounded by the handler's), and the
# response is read back from the socket as HTTP/1.1 bytes. http.client, urllib.request, urllib3 and
# requests run unchanged on top. TLS is the host's: an ssl-wrapped socket marks its exchanges
# https, and the host checks the server's certificate against its own CAs.
import errno
import json
import re
import socket
import ssl
import _socket

HTTP_ONLY = ('outbound connections from islet functions go through HTTP only (urllib.request, '
             'http.client, requests): raw sockets, other protocols and DNS lookups are not available')
# A request larger than this (head and body) is refused before it leaves the sandbox.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
_MAX_HEAD_BYTES = 64 * 1024
_HOP_BY_HOP = frozenset(('connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te',
                         'trailer', 'host', 'content-length', 'expect'))
_REQUEST_LINE = re.compile(rb'([A-Z]{1,16}) (\S+) HTTP/1\.[01]\Z')
_METHOD_PREFIX = re.compile(rb'[A-Z]{0,16}( |\Z)')

# Set by the runtime at init: (kind, payload, body) -> (text, bytes or None), the host's opSync,
# which raises HostError (set at boot: python/sandbox/runtime.py) with the failure's code and message.
host_op = None
HostError = None

# Connections by file descriptor: ssl.SSLSocket takes over the descriptor of the socket it wraps.
_channels = {}


def _refuse(detail=None):
    return OSError(errno.EPERM, HTTP_ONLY if detail is None else '%s (%s)' % (HTTP_ONLY, detail))


class _Channel(object):
    """One connection: the request bytes written so far and the response bytes not read yet."""

    def __init__(self, host, port):
        self.host = host
        self.port = port
        self.tls = False
        self.server_hostname = None
        self.out = bytearray()
        self.inbuf = bytearray()
        self.exchanges = 0

    def write(self, data, timeout):
        self.out += data
        if len(self.out) > MAX_REQUEST_BYTES:
            self.out = bytearray()
            raise OSError(errno.EMSGSIZE, 'the HTTP request is larger than %d bytes' % MAX_REQUEST_BYTES)
        while self.out:
            request = self._take_request()
            if request is None:
                return
            self._exchange(request, timeout)

    def read(self, size):
        if not self.inbuf:
            if self.out:
                raise _refuse('reading before a whole HTTP request was written')
            if self.exchanges == 0:
                raise _refuse('nothing was sent to read an answer to')
            return b''
        size = len(self.inbuf) if size is None or size <= 0 else size
        data = bytes(self.inbuf[:size])
        del self.inbuf[:size]
        return data

    def _take_request(self):
        """The first whole request of `out` as (method, target, headers, body), removed from it; None until whole."""
        out = self.out
        end = out.find(b'\r\n\r\n')
        if end < 0:
            if not _METHOD_PREFIX.match(bytes(out[:17])) or len(out) > _MAX_HEAD_BYTES:
                self.out = bytearray()
                raise _refuse('what was written is not an HTTP request')
            return None
        lines = bytes(out[:end]).split(b'\r\n')
        match = _REQUEST_LINE.match(lines[0])
        if not match:
            self.out = bytearray()
            raise _refuse('what was written is not an HTTP request')
        method, target = match.group(1).decode('ascii'), match.group(2).decode('latin-1')
        if method == 'CONNECT':
            self.out = bytearray()
            raise _refuse('proxy tunnels are not available')
        headers = []
        length = 0
        chunked = False
        for line in lines[1:]:
            name, sep, value = line.decode('latin-1').partition(':')
            if not sep:
                continue
            name, value = name.strip(), value.strip()
            lower = name.lower()
            if lower == 'content-length':
                length = int(value)
            elif lower == 'transfer-encoding' and 'chunked' in value.lower():
                chunked = True
            headers.append((name, value))
        start = end + 4
        if chunked:
            body, consumed = _dechunk(out, start)
            if body is None:
                return None
            del out[:consumed]
        else:
            if len(out) - start < length:
                return None
            body = bytes(out[start:start + length])
            del out[:start + length]
        return method, target, headers, body

    def _exchange(self, request, timeout):
        method, target, headers, body = request
        if target.startswith(('http://', 'https://')):
            url = target
        else:
            scheme = 'https' if self.tls else 'http'
            default = 443 if self.tls else 80
            host = self.host if ':' not in self.host else '[%s]' % self.host
            url = '%s://%s%s%s' % (scheme, host, '' if self.port == default else ':%d' % self.port, target if target.startswith('/') else '/' + target)
        payload = {
            'url': url,
            'method': method,
            'headers': [[n, v] for n, v in headers if n.lower() not in _HOP_BY_HOP],
        }
        if timeout is not None:
            payload['timeoutMs'] = max(1, int(timeout * 1000))
        try:
            text, data = host_op('fetch', json.dumps(payload), body if method not in ('GET', 'HEAD') or body else None)
        except HostError as error:
            self.exchanges += 1
            raise _egress_error(error.code, error.message) from None
        self.exchanges += 1
        answer = json.loads(text)
        self.inbuf += _response_bytes(method, answer, data or b'')


def _dechunk(out, start):
    """The body of a chunked request starting at `start`, and the bytes it took; (None, 0) until whole."""
    body = bytearray()
    pos = start
    while True:
        eol = out.find(b'\r\n', pos)
        if eol < 0:
            return None, 0
        size = int(bytes(out[pos:eol]).split(b';')[0].strip() or b'0', 16)
        pos = eol + 2
        if size == 0:
            # Trailers, then an empty line.
            while True:
                eol = out.find(b'\r\n', pos)
                if eol < 0:
                    return None, 0
                if eol == pos:
                    return bytes(body), eol + 2
                pos = eol + 2
        if len(out) < pos + size + 2:
            return None, 0
        body += out[pos:pos + size]
        pos += size + 2


def _reason(status):
    from http import HTTPStatus
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ''


def _response_bytes(method, answer, body):
    status = int(answer['status'])
    reason = answer.get('statusText') or _reason(status)
    lines = ['HTTP/1.1 %d %s' % (status, reason)]
    for name, value in answer['headers']:
        lower = name.lower()
        # The host decoded any content-encoding and measured the body again.
        if lower in ('content-encoding', 'transfer-encoding', 'connection', 'keep-alive'):
            continue
        if lower == 'content-length' and method != 'HEAD':
            continue
        lines.append('%s: %s' % (name, value))
    if method == 'HEAD' or status in (204, 304) or 100 <= status < 200:
        body = b''
    else:
        lines.append('Content-Length: %d' % len(body))
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1') + body


def _egress_error(code, message):
    """The socket error each of the egress's failures stands for."""
    if code == 'ERR_EGRESS_BLOCKED':
        return PermissionError(errno.EACCES, message)
    if code == 'ERR_EGRESS_DNS':
        return socket.gaierror(socket.EAI_NONAME, message)
    if code == 'ERR_EGRESS_REFUSED':
        return ConnectionRefusedError(errno.ECONNREFUSED, message)
    if code == 'ERR_EGRESS_TIMEOUT':
        return TimeoutError('timed out')
    if code == 'ERR_EGRESS_TLS':
        return ssl.SSLCertVerificationError(1, message)
    if code == 'ERR_EGRESS_TOO_LARGE':
        return OSError(errno.EFBIG, message)
    if code == 'ERR_EGRESS_URL':
        return OSError(errno.EINVAL, message)
    return ConnectionResetError(errno.ECONNRESET, message)


def open_channel(host, port):
    """A connection to (host, port) that is not a socket's (httpcore's async streams use them)."""
    if isinstance(host, bytes):
        host = host.decode('idna')
    if not isinstance(port, int) or not 0 < port < 65536:
        raise OverflowError('connect(): port must be 0-65535.')
    return _Channel(str(host), port)


def _channel(sock):
    channel = _channels.get(sock.fileno())
    if channel is None:
        raise OSError(errno.ENOTCONN, 'Transport endpoint is not connected')
    return channel


def _is_stream(sock):
    return sock.family in (socket.AF_INET, socket.AF_INET6) and int(sock.type) & 0xF == socket.SOCK_STREAM


# --- socket.socket: what a connected stream socket does here.

_socket_init = socket.socket.__init__
_real_close = socket.socket._real_close


def _init(self, family=-1, type=-1, proto=-1, fileno=None):
    _socket_init(self, family, type, proto, fileno)
    if fileno is None:
        _channels.pop(self.fileno(), None)


def _connect(self, address):
    if not _is_stream(self):
        raise _refuse('only TCP connections that carry HTTP')
    if not isinstance(address, tuple) or len(address) < 2:
        raise TypeError('%s address must be a tuple (host, port)' % ('AF_INET6' if self.family == socket.AF_INET6 else 'AF_INET'))
    _channels[self.fileno()] = open_channel(address[0], address[1])


def _connect_ex(self, address):
    try:
        _connect(self, address)
    except OSError as exc:
        return exc.errno or errno.EPERM
    return 0


def _sendall(self, data, flags=0):
    _channel(self).write(bytes(memoryview(data)), self.gettimeout())


def _send(self, data, flags=0):
    data = bytes(memoryview(data))
    _channel(self).write(data, self.gettimeout())
    return len(data)


def _recv(self, size, flags=0):
    return _channel(self).read(size)


def _recv_into(self, buffer, nbytes=0, flags=0):
    view = memoryview(buffer).cast('B')
    data = _channel(self).read(nbytes or len(view))
    view[:len(data)] = data
    return len(data)


def _getpeername(self):
    channel = _channel(self)
    return (channel.host, channel.port) if self.family == socket.AF_INET else (channel.host, channel.port, 0, 0)


def _shutdown(self, how):
    _channel(self)


def _close(self, _ss=_socket.socket):
    _channels.pop(self.fileno(), None)
    _real_close(self, _ss)


def _no_server(self, *args, **kwargs):
    raise OSError(errno.EPERM, 'functions cannot listen for or accept connections: they are called over HTTP by islet')


def _no_datagrams(self, *args, **kwargs):
    raise _refuse('datagrams are not available')


# --- name resolution: the host resolves names when the request goes out, under the egress rules.

def _is_ip(host):
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return family
        except (OSError, ValueError):
            pass
    return None


def _no_lookup(name):
    return socket.gaierror(socket.EAI_FAIL, 'cannot resolve %r: %s; names are resolved by the host when an HTTP request goes out' % (name, HTTP_ONLY))


def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    """The address to connect to, unresolved: the host resolves names when the request goes out."""
    if isinstance(host, bytes):
        host = host.decode('idna')
    host = 'localhost' if host is None else host
    if isinstance(port, bytes):
        port = port.decode('ascii')
    if isinstance(port, str):
        if port.isdigit():
            port = int(port)
        elif port in ('http', 'https'):
            port = 80 if port == 'http' else 443
        else:
            raise socket.gaierror(socket.EAI_SERVICE, 'Servname not supported for ai_socktype')
    port = port or 0
    literal = _is_ip(host)
    af = literal or (socket.AF_INET6 if family == socket.AF_INET6 else socket.AF_INET)
    if family not in (0, socket.AF_UNSPEC, af):
        raise socket.gaierror(socket.EAI_FAMILY, 'ai_family not supported')
    if type not in (0, socket.SOCK_STREAM):
        raise _refuse('only TCP connections that carry HTTP')
    address = (host, port) if af == socket.AF_INET else (host, port, 0, 0)
    return [(socket.AddressFamily(af), socket.SocketKind.SOCK_STREAM, socket.IPPROTO_TCP, '', address)]


def gethostbyname(name):
    if _is_ip(name) == socket.AF_INET:
        return name
    raise _no_lookup(name)


def gethostbyname_ex(name):
    if _is_ip(name) == socket.AF_INET:
        return (name, [], [name])
    raise _no_lookup(name)


def gethostbyaddr(address):
    raise _no_lookup(address)


def getnameinfo(sockaddr, flags):
    if flags & socket.NI_NUMERICHOST and _is_ip(sockaddr[0]):
        return (sockaddr[0], str(sockaddr[1]))
    raise _no_lookup(sockaddr[0])


# --- ssl: the host does TLS; a wrapped socket's exchanges go out as https.

_ssl_create = ssl.SSLSocket._create.__func__


def _ssl_create_socket(cls, sock, server_side=False, do_handshake_on_connect=True, suppress_ragged_eofs=True,
                       server_hostname=None, context=None, session=None):
    if server_side:
        _no_server(sock)
    wrapped = _ssl_create(cls, sock, False, False, suppress_ragged_eofs, server_hostname, context, session)
    # Connected already (the usual case): its exchanges go out as https from now on.
    _do_handshake(wrapped)
    return wrapped


def _do_handshake(self, block=False):
    channel = _channels.get(self.fileno())
    if channel is not None:
        channel.tls = True
        channel.server_hostname = self.server_hostname or channel.host


def _ssl_connect(self, address):
    _connect(self, address)
    _do_handshake(self)


def _getpeercert(self, binary_form=False):
    """What the host checks the certificate against (it refuses the exchange when it does not match)."""
    channel = _channels.get(self.fileno())
    if channel is None or binary_form:
        return None
    name = channel.server_hostname or channel.host
    kind = 'IP Address' if _is_ip(name) else 'DNS'
    return {'subject': ((('commonName', name),),), 'subjectAltName': ((kind, name),)}


def install():
    """Makes socket and ssl speak to the host's egress. Runs once per interpreter, before user code."""
    cls = socket.socket
    cls.__init__ = _init
    cls.connect = _connect
    cls.connect_ex = _connect_ex
    cls.sendall = _sendall
    cls.send = _send
    cls.recv = _recv
    cls.recv_into = _recv_into
    cls.getpeername = _getpeername
    cls.shutdown = _shutdown
    cls._real_close = _close
    cls.bind = cls.listen = cls.accept = _no_server
    cls.sendto = cls.recvfrom = cls.recvfrom_into = cls.sendmsg = cls.recvmsg = _no_datagrams
    for name, fn in (('getaddrinfo', getaddrinfo), ('gethostbyname', gethostbyname), ('gethostbyname_ex', gethostbyname_ex),
                     ('gethostbyaddr', gethostbyaddr), ('getnameinfo', getnameinfo)):
        setattr(socket, name, fn)
    ssl.SSLSocket._create = classmethod(_ssl_create_socket)
    ssl.SSLSocket.do_handshake = _do_handshake
    ssl.SSLSocket.connect = _ssl_connect
    ssl.SSLSocket.getpeercert = _getpeercert
