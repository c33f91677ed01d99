# The Python side of islet's runtime, loaded once into every Python isolate after Pyodide boots.
# The JavaScript side calls _islet_boot once per interpreter, _islet_init once per function and
# _islet_call for every invocation.
import asyncio
import builtins
import gc
import importlib
import io
import json
import os
import random
import sys
import traceback
import types
import warnings
from urllib.parse import parse_qsl

FUNCTION_DIR = '/function'
_handler = None
# The host's synchronous operations and the delivery of async results (set at init).
_host_op = None
_deliver = None


class HostError(Exception):
    """A host operation's failure, as it crossed (engine/capabilities/errors.ts): its code ('' when
    it has none) and its message. Each of islet's modules raises its API's error of it."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class HTTPResponse(object):
    """An explicit response: req.HTTPResponse(status_code=200, headers=None, body='')."""

    def __init__(self, status_code=200, headers=None, body=''):
        self.status_code = status_code
        self.headers = {} if headers is None else headers
        self.body = '' if body is None else body


class Request(object):
    """The second handler argument; `req.request` is the request itself."""

    HTTPResponse = HTTPResponse

    def __init__(self, head, headers_json, raw):
        request_id, self.method, self.path, raw_query = head[:4]
        # A scheduled run's tick ({"cron", "scheduledTime"}); None for a call. HTTP cannot set it.
        self.scheduled = head[4] if len(head) > 4 else None
        self.query = _parse_query(raw_query)
        self._headers_json = headers_json
        if isinstance(raw, _HostBody):
            # Over the limit of a body read whole: `body` is read on first use (and refused), `stream` as it comes.
            self._streamed = raw
        else:
            self.body = raw
        self.request_id = request_id
        self.requestId = request_id
        self.env = _env
        self.request = self

    def __getattr__(self, name):
        # Only for attributes not set yet: the headers are parsed, and the body's stream made, on first read.
        if name == 'headers':
            self.headers = json.loads(self.__dict__.pop('_headers_json'))
            return self.headers
        streamed = self.__dict__.get('_streamed')
        if name == 'body' and streamed is not None:
            return streamed.whole()
        if name == 'stream':
            self.stream = io.BytesIO(self.body) if streamed is None else io.BufferedReader(streamed, _STREAM_BUFFER)
            return self.stream
        raise AttributeError("'Request' object has no attribute '%s'" % name)

    def iter_chunks(self):
        """The body's bytes as they arrive (pieces of up to 1 MiB); a body read whole, in one piece."""
        streamed = self.__dict__.get('_streamed')
        if streamed is None:
            if self.body:
                yield self.body
            return
        while True:
            chunk = streamed.next_chunk()
            if chunk is None:
                return
            yield chunk

    def __repr__(self):
        return '<Request %s %s>' % (self.method, self.path)


class RequestBodyError(OSError):
    """A request body could not be read: over a limit (ERR_PAYLOAD_TOO_LARGE, and the call answers
    413 whatever the handler does next), or its client went away (ERR_CLIENT_GONE)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


# What `req.stream` holds of a streamed body ahead of the reads that ask less.
_STREAM_BUFFER = 64 * 1024


class _HostBody(io.RawIOBase):
    """A request body still arriving, read from the host a chunk at a time (the request-body
    capability's bodyRead: the thread waits for the next bytes, within the handler's timeout)."""

    def __init__(self, body_id):
        super().__init__()
        self._payload = json.dumps({'id': body_id})
        # The chunk being read by readinto, and how far.
        self._chunk = b''
        self._at = 0
        self._ended = False

    def readable(self):
        return True

    def next_chunk(self):
        """The next bytes as the host has them (a piece of up to 1 MiB), or None at the end."""
        if self._at < len(self._chunk):
            rest = self._chunk[self._at:] if self._at else self._chunk
            self._chunk, self._at = b'', 0
            return rest
        if self._ended:
            return None
        try:
            _, data = _host_op('bodyRead', self._payload, None)
        except HostError as error:
            raise RequestBodyError(error.code, error.message) from None
        if data is None:
            self._ended = True
        return data

    def readinto(self, buffer):
        if self._at >= len(self._chunk):
            chunk = self.next_chunk()
            if chunk is None:
                return 0
            self._chunk, self._at = chunk, 0
        size = min(len(buffer), len(self._chunk) - self._at)
        buffer[:size] = memoryview(self._chunk)[self._at:self._at + size]
        self._at += size
        return size

    def whole(self):
        """`req.body` of a body over the limit of a body read whole: the host refuses it (and so answers 413)."""
        try:
            text, data = _host_op('bodyWhole', self._payload, None)
        except HostError as error:
            raise RequestBodyError(error.code, error.message) from None
        return data if data is not None else text.encode('utf-8')


class _BodyOverLimit(object):
    """The handler's first argument when the body is over the limit of a body read whole: any use
    of it (truth, len, iteration, indexing, `.get`, str) reads `req.body`, which raises
    RequestBodyError, and the call answers 413 as it did when such a body never reached the
    handler. A handler that reads `req.stream` or `req.iter_chunks()` leaves it alone."""

    def __init__(self, request):
        object.__setattr__(self, '_request', request)

    def _refuse(self, *args, **kwargs):
        self._request.body
        raise RequestBodyError('ERR_PAYLOAD_TOO_LARGE', 'the request body is over the limit of a body read whole')

    __bool__ = __len__ = __iter__ = __contains__ = __getitem__ = __setitem__ = __eq__ = __str__ = __repr__ = _refuse

    def __getattr__(self, name):
        self._refuse()

    __hash__ = None


def _parse_query(raw):
    if '%' in raw or '+' in raw:
        return dict(parse_qsl(raw, keep_blank_values=True))
    # No escapes (the common case): the same result without parse_qsl's decoding work.
    query = {}
    for part in raw.split('&'):
        if part:
            key, _, value = part.partition('=')
            query[key] = value
    return query


def _user_traceback(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(FUNCTION_DIR + '/')]
    lines = ['Traceback (most recent call last):\n'] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return ''.join(lines).rstrip('\n')


def _describe(exc):
    if isinstance(exc, SyntaxError):
        where = ''
        if exc.filename:
            where = ' (%s, line %s)' % (exc.filename.replace(FUNCTION_DIR + '/', ''), exc.lineno)
        hint = ''
        if isinstance(exc, SyntaxError) and _looks_like_python2(exc):
            hint = ' [Python 2 syntax is not supported: the python2 runtime runs Python 3 with Python 2 names]'
        return 'SyntaxError: %s%s%s' % (exc.msg, where, hint)
    why = sys.modules['_islet_stdlib'].explain_compiled(exc) if isinstance(exc, ImportError) else None
    return '%s: %s%s' % (type(exc).__name__, exc, '' if why is None else ' [%s]' % why)


def _looks_like_python2(exc):
    text = (exc.text or '').strip()
    return text.startswith('print ') or text.startswith('exec ') or ' except ' in (' ' + text) and ',' in text


class _Sdk(types.ModuleType):
    """The `sdk` module: invoke(account_id, function_name, api_key, body) for calling other functions."""

    class InvokeResult(object):
        def __init__(self, status_code, headers, body):
            self.status_code = status_code
            self.statusCode = status_code
            self.headers = headers
            self.body = body

        def __repr__(self):
            return '<InvokeResult %s>' % self.status_code

    def invoke(self, account_id, function_name, api_key, body=None):
        if body is None:
            payload = ''
        elif isinstance(body, (bytes, bytearray)):
            payload = bytes(body).decode('utf-8')
        elif isinstance(body, str):
            payload = body
        else:
            payload = json.dumps(body)
        try:
            text, _ = _host_op('invoke', json.dumps({
                'accountId': str(account_id), 'functionName': str(function_name),
                'apiKey': '' if api_key is None else str(api_key), 'body': payload,
            }), None)
        except HostError as error:
            raise RuntimeError('sdk.invoke failed: %s' % error.message) from None
        answer = json.loads(text)
        return _Sdk.InvokeResult(answer['statusCode'], answer['headers'], answer['body'])


def _islet_boot(net_source, stdlib_source):
    """Loads islet's networking and standard-library modules into a freshly booted interpreter."""
    for name, source in (('_islet_net', net_source), ('_islet_stdlib', stdlib_source)):
        module = types.ModuleType(name)
        exec(compile(source, '<islet:%s>' % name[7:], 'exec'), module.__dict__)
        module.HostError = HostError
        sys.modules[name] = module
        module.install()


def _wrap_host_op(js_op):
    """(kind, payload, body) -> (text, bytes or None) over the JavaScript side's opSync. A failure
    crosses as the JSON of {code, message} and is raised as HostError here, the one place Python
    turns a host operation's failure into an exception."""
    def host_op(kind, payload, body):
        result = js_op(kind, payload, body)
        if not result[0]:
            error = json.loads(result[1])
            raise HostError(error.get('code', ''), error.get('message', ''))
        data = result[2]
        return result[1], None if data is None else data.to_bytes()
    return host_op
# The function's env as deployed (what req.env shows); set once at init.
_env = {}


def _load_failure(exc, main):
    """A module-level failure as JSON: the message, the innermost file and line of the function's
    folder, and the traceback of the function's own frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(FUNCTION_DIR + '/')]
    where = None
    if isinstance(exc, SyntaxError) and exc.filename and exc.filename.startswith(FUNCTION_DIR + '/'):
        where = (exc.filename[len(FUNCTION_DIR) + 1:], exc.lineno)
    elif frames:
        where = (frames[-1].filename[len(FUNCTION_DIR) + 1:], frames[-1].lineno)
    message = _describe(exc)
    if where and not isinstance(exc, SyntaxError):
        message += ' (%s, line %s)' % where
    failure = {'message': message}
    if where:
        failure['file'], failure['line'] = where
    if not isinstance(exc, SyntaxError):
        failure['stack'] = _user_traceback(exc)
    return json.dumps(failure)


def _show_warnings_as(warn):
    """Python's warnings (a RequestsDependencyWarning at import, a DeprecationWarning) as one `warn`
    log line each, instead of lines of stderr, which the logs keep as errors."""
    def show(message, category, filename, lineno, file=None, line=None):
        if filename.startswith(FUNCTION_DIR + '/'):
            filename = filename[len(FUNCTION_DIR) + 1:]
        warn(warnings.formatwarning(message, category, filename, lineno, line).rstrip('\n'))
    warnings.showwarning = show


def _islet_init(config_json, js_op, deliver, warn):
    """Makes this interpreter the function: env, sdk, its module. Returns None, or the JSON of why
    its module could not load."""
    global _handler, _host_op, _deliver, _env
    config = json.loads(config_json)
    _show_warnings_as(warn)
    _host_op = _wrap_host_op(js_op)
    _deliver = deliver
    sys.modules['_islet_net'].host_op = _host_op
    sys.modules['_islet_stdlib'].host_op = _host_op
    os.environ.clear()
    os.environ.update(config['env'])
    os.environ['SERVICE_ACCOUNT_ID'] = config['accountId']
    _env = dict(os.environ)
    if config['runtime'] == 'python2':
        builtins.unicode = str
        builtins.basestring = str
        builtins.xrange = range
        builtins.long = int
    sdk = _Sdk('sdk')
    sys.modules['sdk'] = sdk
    # Restored instances share the snapshot's random state: reseed from the host's CSPRNG.
    random.seed(os.urandom(32))
    sys.path.insert(0, FUNCTION_DIR)
    os.chdir(FUNCTION_DIR)
    module_name = config['main'][:-3].replace('/', '.') if config['main'].endswith('.py') else config['main']
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:
        return _load_failure(exc, config['main'])
    handler = getattr(module, config['entrypoint'], None)
    if not callable(handler):
        found = 'nothing' if handler is None else type(handler).__name__
        return json.dumps({'message': '%s does not export a function named "%s" (found %s)' % (config['main'], config['entrypoint'], found)})
    _handler = handler
    # What is loaded by now lives as long as the instance: keep it out of the cyclic collector's
    # full passes, which otherwise walk the whole standard library every few thousand calls.
    gc.freeze()


def _encode(value):
    if isinstance(value, HTTPResponse):
        status = value.status_code
        if isinstance(status, bool) or not isinstance(status, int) or status < 100 or status > 599:
            return ('e', 'ERR_BAD_RESPONSE', 'HTTPResponse status_code must be an integer from 100 to 599, got %r' % (status,), None)
        headers = value.headers
        if not isinstance(headers, dict):
            return ('e', 'ERR_BAD_RESPONSE', 'HTTPResponse headers must be a dict of names to string values', None)
        for name, header in headers.items():
            # A list of strings: the header sent once per value (Set-Cookie), each on a line of its own.
            if not isinstance(header, str) and not (isinstance(header, (list, tuple)) and all(isinstance(v, str) for v in header)):
                return ('e', 'ERR_BAD_RESPONSE', 'HTTPResponse header %s must be a string or a list of strings, got %s' % (json.dumps(str(name)), type(header).__name__), None)
        body = value.body
        if isinstance(body, str):
            return 'R%d\n%s\n%s' % (status, json.dumps(headers), body)
        if isinstance(body, (bytes, bytearray, memoryview)):
            return ('b', status, json.dumps(headers), bytes(body))
        if _streams(body):
            return ('s', status, json.dumps(headers), _BodyStream(body))
        return ('e', 'ERR_BAD_RESPONSE', 'HTTPResponse body must be str, bytes, or a generator (or async generator) of them, got %s' % type(body).__name__, None)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ('b', 200, json.dumps({'content-type': 'application/octet-stream'}), bytes(value))
    return 'J' + json.dumps(value)


def _streams(body):
    """Whether a body is sent as it comes: a generator, an async generator, any iterator."""
    return hasattr(body, '__next__') or hasattr(body, '__anext__') or hasattr(body, '__aiter__')


def _chunk(value):
    if isinstance(value, str):
        return ('more', value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ('more', bytes(value))
    raise TypeError('a streamed body may only yield str or bytes, got %s' % type(value).__name__)


class _BodyStream(object):
    """A streamed body, pulled chunk by chunk by the JavaScript side (response-streams.ts):
    `next()` answers ('more', str or bytes) or ('end', None), an awaitable of it for an async
    source; `close()` stops the source (its reader went away), running its finally blocks."""

    def __init__(self, source):
        self._async = hasattr(source, '__anext__') or hasattr(source, '__aiter__')
        self._source = source.__aiter__() if self._async and hasattr(source, '__aiter__') else source
        if not self._async:
            self._source = iter(source)

    def next(self):
        if self._async:
            return asyncio.ensure_future(self._anext())
        try:
            return _chunk(next(self._source))
        except StopIteration:
            return ('end', None)

    async def _anext(self):
        try:
            return _chunk(await self._source.__anext__())
        except StopAsyncIteration:
            return ('end', None)

    def close(self):
        closer = getattr(self._source, 'aclose' if self._async else 'close', None)
        if closer is None:
            return
        result = closer()
        if self._async:
            asyncio.ensure_future(result)


def _failure(exc):
    if isinstance(exc, MemoryError):
        # The interpreter reached its memory cap: the instance is replaced, as for node8.
        return ('e', 'ERR_RESOURCE_LIMIT', 'the function went over its memory limit (MemoryError)', _user_traceback(exc))
    return ('e', 'ERR_FUNCTION_FAILED', _describe(exc), _user_traceback(exc))


def _settled(call_id, task):
    """Delivers the result of an async handler's task to the host."""
    try:
        outcome = _encode(task.result())
    except BaseException as exc:
        outcome = _failure(exc)
    _deliver(call_id, outcome)


def _islet_call(meta, raw, call_id):
    # ["<request id>","<method>","<path>","<raw query>"], a tab, the headers' JSON (callMeta in instance.ts)
    head, _, headers_json = meta.partition('\t')
    if isinstance(raw, (int, float)):
        # The id of a body over the limit of a body read whole, still arriving (engine/whole-or-stream.ts).
        request = Request(json.loads(head), headers_json, _HostBody(int(raw)))
        body = _BodyOverLimit(request)
    else:
        if raw is None:
            data = b''
        elif isinstance(raw, str):
            data = raw.encode('utf-8')
        else:
            data = raw.to_bytes()
        if not data:
            body = {}
        elif isinstance(raw, str):
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        else:
            body = None
        request = Request(json.loads(head), headers_json, data)
    try:
        result = _handler(body, request)
        if type(result) is not str and asyncio.iscoroutine(result):
            # An async handler: its task runs on Pyodide's event loop, whose callbacks run on islet's
            # timers, and its result is delivered when it settles (0 tells the host to wait for it).
            task = asyncio.get_event_loop().create_task(result)
            task.add_done_callback(lambda t: _settled(call_id, t))
            return 0
        return _encode(result)
    except BaseException as exc:
        return _failure(exc)
