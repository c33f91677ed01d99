# What the standard library lacks in Pyodide and functions expect: hashlib's key derivations
# (there is no OpenSSL here: the host's crypto does them), and clear errors where WebAssembly
# cannot follow CPython (threads; asyncio.run blocking inside a synchronous handler). The IANA
# time-zone database is a read-only /usr/share/zoneinfo made by the JavaScript side (zoneinfo.ts).
# Also the two packages that would not take the standard library's way out: urllib3 2 and
# httpcore's async side (under httpx.AsyncClient).
import asyncio
import importlib.machinery
import json
import sys
import threading
import _thread

# Set by the runtime at init: (kind, payload, body) -> (text, bytes or None), the host's opSync,
# which raises HostError (set at boot: runtime.py) with the failure's code and message.
host_op = None
HostError = None

NO_THREADS = ('threads are not available in islet functions: Python runs in WebAssembly here, which has no threads. '
              'For concurrent I/O, make the handler "async def handler(body, req)" and use asyncio')
NO_BLOCKING_LOOP = ('asyncio.run() and run_until_complete() cannot block in islet functions (WebAssembly here has no stack '
                    'switching): make the handler "async def handler(body, req)" and await the coroutine instead')


# --- hashlib.pbkdf2_hmac and hashlib.scrypt

def pbkdf2_hmac(hash_name, password, salt, iterations, dklen=None):
    """Password-based key derivation (PKCS #5 v2.0), as CPython's."""
    import hashlib
    password, salt = bytes(memoryview(password)), bytes(memoryview(salt))
    digest = hashlib.new(hash_name)
    if iterations < 1:
        raise ValueError('iteration value must be greater than 0.')
    if dklen is None:
        dklen = digest.digest_size
    if dklen < 1:
        raise ValueError('key length must be greater than 0.')
    request = {'hash': hash_name, 'iterations': iterations, 'dklen': dklen, 'digestSize': digest.digest_size, 'passwordLength': len(password)}
    try:
        return host_op('pbkdf2', json.dumps(request), password + salt)[1]
    except HostError as error:
        if error.code != 'ERR_TOO_MUCH_WORK':
            raise ValueError(error.message) from None
    return _pbkdf2_here(hash_name, password, salt, iterations, dklen)


def _pbkdf2_here(hash_name, password, salt, iterations, dklen):
    """PBKDF2 in the interpreter, for derivations too long for the host's shared thread pool."""
    import hmac
    block = 1
    key = b''
    while len(key) < dklen:
        u = hmac.digest(password, salt + block.to_bytes(4, 'big'), hash_name)
        acc = int.from_bytes(u, 'big')
        for _ in range(iterations - 1):
            u = hmac.digest(password, u, hash_name)
            acc ^= int.from_bytes(u, 'big')
        key += acc.to_bytes(len(u), 'big')
        block += 1
    return key[:dklen]


def scrypt(password, *, salt=None, n=None, r=None, p=None, maxmem=0, dklen=64):
    """The scrypt key derivation (RFC 7914), as CPython's."""
    if salt is None:
        raise TypeError("scrypt() missing required argument 'salt'")
    for name, value in (('n', n), ('r', r), ('p', p)):
        if not isinstance(value, int):
            raise TypeError("scrypt() missing required argument '%s'" % name)
    if n < 2 or n & (n - 1):
        raise ValueError('n must be a power of 2.')
    password, salt = bytes(memoryview(password)), bytes(memoryview(salt))
    request = {'n': n, 'r': r, 'p': p, 'maxmem': maxmem, 'dklen': dklen, 'passwordLength': len(password)}
    try:
        return host_op('scrypt', json.dumps(request), password + salt)[1]
    except HostError as error:
        raise ValueError(error.message) from None


def _patch_hashlib(module):
    module.pbkdf2_hmac = pbkdf2_hmac
    module.scrypt = scrypt
    module.__all__ = tuple(module.__all__) + ('pbkdf2_hmac', 'scrypt')


# --- zoneinfo: Pyodide's message for a missing zone advises pyodide.loadPackage, which a function
# cannot call; the database is /usr/share/zoneinfo here. Say what CPython says.

def _patch_zoneinfo_common(module):
    vendored = module.load_tzdata

    def load_tzdata(key):
        try:
            return vendored(key)
        except module.ZoneInfoNotFoundError:
            raise module.ZoneInfoNotFoundError('No time zone found with key %s' % key) from None
    module.load_tzdata = load_tzdata


_ZONE_TEXTS = frozenset(('tzdata.zi', 'zone.tab', 'zone1970.tab', 'iso3166.tab', 'leapseconds'))


def _available_timezones():
    # CPython opens every file under TZPATH to check it is a zone; here each is a host read, so the
    # host's listing answers instead (the same set: its TZif files but posixrules).
    try:
        text, _ = host_op('tzdata', json.dumps({'key': ''}), None)
    except HostError:
        return set()
    return {key for key, _ in json.loads(text) if key not in _ZONE_TEXTS and key != 'posixrules'}


def _patch_zoneinfo_tzpath(module):
    module.available_timezones = _available_timezones


# --- threads and blocking event loops: say why not, and what to do instead

def _no_threads(*args, **kwargs):
    raise RuntimeError(NO_THREADS)


def _in_task():
    # Pyodide's loop counts as running even between tasks: a task running now is what CPython means.
    try:
        return asyncio.current_task() is not None
    except RuntimeError:
        return False


def _no_blocking_run(main, *, debug=None, loop_factory=None):
    if hasattr(main, 'close'):
        main.close()
    if _in_task():
        raise RuntimeError('asyncio.run() cannot be called from a running event loop')
    raise RuntimeError(NO_BLOCKING_LOOP)


def _no_run_until_complete(self, future):
    if asyncio.iscoroutine(future):
        future.close()
    raise RuntimeError(NO_BLOCKING_LOOP)


# --- urllib3 2: on sys.platform 'emscripten' its package __init__ calls
# urllib3.contrib.emscripten.inject_into_urllib3(), which swaps its connection classes for ones
# that call the browser's fetch through the `js` module (JSPI, or XMLHttpRequest and a Worker with
# SharedArrayBuffer). None of that is here: the first request failed with "ImportError: cannot
# import name 'console' from 'js'". Its ordinary classes speak http.client over socket.socket,
# which net.py carries to the host's guarded egress (as it does for urllib3 1.26, http.client and
# urllib), with the socket's timeout, TLS checked by the host, redirects and retries as urllib3
# does them. So the package's __init__ is replaced by one whose inject_into_urllib3 keeps them.
# Its submodules stay importable (its __path__ is the real folder), for code that asks for them.

def _keep_urllib3_sockets():
    """urllib3 keeps its socket-based connection classes: islet's sockets carry HTTP to the host."""


def _replace_urllib3_emscripten(module):
    module.inject_into_urllib3 = _keep_urllib3_sockets


# --- httpcore (httpx's transport), async: its AutoBackend opens connections with anyio, that is
# asyncio's loop.create_connection, which Pyodide's WebLoop does not have ("sock_connect() is not
# available"), and then does TLS itself over a memory BIO, whose handshake bytes are not HTTP.
# Here its async backend is islet's: a stream is one of net.py's connections, TLS is the host's
# (start_tls marks the connection https), and a request waits for the host's answer as a
# synchronous one does: concurrent requests of one instance (asyncio.gather) go out one after
# another, and the instance runs nothing else meanwhile.

class _HttpcoreStream(object):
    def __init__(self, channel):
        self._channel = channel

    async def read(self, max_bytes, timeout=None):
        return self._channel.read(max_bytes)

    async def write(self, buffer, timeout=None):
        if buffer:
            self._channel.write(bytes(buffer), timeout)

    async def aclose(self):
        self._channel = None

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        self._channel.tls = True
        self._channel.server_hostname = server_hostname or self._channel.host
        return self

    def get_extra_info(self, info):
        if info in ('client_addr', 'server_addr') and self._channel is not None:
            return (self._channel.host, self._channel.port)
        # 'is_readable' False: an idle connection has no bytes the server sent unasked.
        return False if info == 'is_readable' else None


class _HttpcoreBackend(object):
    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _HttpcoreStream(sys.modules['_islet_net'].open_channel(host, port))

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise sys.modules['_islet_net']._refuse('Unix sockets are not available')

    async def sleep(self, seconds):
        await asyncio.sleep(seconds)


def _patch_httpcore_auto(module):
    async def _init_backend(self):
        if not hasattr(self, '_backend'):
            self._backend = _HttpcoreBackend()
    module.AutoBackend._init_backend = _init_backend


# --- compiled modules: pip installs a package's extension modules (*.so) built for CPython on the
# machine that ran it; WebAssembly cannot load them and `islet deploy` leaves them out. What is left
# fails to import ("No module named ...", or "cannot import name ... (unknown location)" where a
# folder of type stubs stands in its place, as pydantic_core's does). An error that names such a
# module says why (runtime.py asks here); the RECORD files (pip's lists of what it installed) are
# read only then, never on the way of an import that works.

_COMPILED_SUFFIXES = ('.so', '.pyd', '.dylib')
_compiled = None


def _listed_compiled(folder):
    import os
    compiled = {}
    for record in [name for name in os.listdir(folder) if name.endswith('.dist-info')]:
        try:
            with open(os.path.join(folder, record, 'RECORD'), encoding='utf-8') as lines:
                for line in lines:
                    path = line.split(',', 1)[0]
                    module, _, rest = path.partition('.')
                    if path.endswith(_COMPILED_SUFFIXES) and rest and '/' not in rest:
                        compiled.setdefault(module.replace('/', '.'), (path, record))
        except (OSError, ValueError):
            continue
    return compiled


def compiled_module(name, folder='/function'):
    """(file, dist-info) when a package of the function's folder installed module `name` as a
    compiled extension, else None."""
    global _compiled
    if not isinstance(name, str) or not name:
        return None
    if _compiled is None:
        try:
            _compiled = _listed_compiled(folder)
        except OSError:
            return None
    return _compiled.get(name)


def explain_compiled(exc):
    """Why an ImportError of a compiled module happened, or None for any other error."""
    listed = compiled_module(getattr(exc, 'name', None)) if isinstance(exc, ImportError) else None
    if listed is None:
        return None
    return ('%s is a compiled extension module (%s, from %s) built for CPython on another platform; islet runs '
            'Python in WebAssembly (Pyodide), which loads pure-Python modules only, and `islet deploy` leaves '
            '*.so files out' % (exc.name, listed[0], listed[1]))


class _PatchOnImport(object):
    """Applies a patch to a module right after it is first imported (so modules no function
    imports cost nothing), or runs a replacement instead of the module's own code."""

    def __init__(self, patches, replacements):
        self.patches = patches
        self.replacements = replacements

    def find_spec(self, name, path=None, target=None):
        patch = self.patches.get(name)
        replacement = self.replacements.get(name)
        if patch is None and replacement is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader, patch) if replacement is None else _ReplacingLoader(spec.loader, replacement)
        return spec


class _PatchingLoader(object):
    def __init__(self, loader, patch):
        self.loader = loader
        self.patch = patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name):
        # get_source and the rest, for tracebacks and inspect.
        return getattr(self.loader, name)


class _ReplacingLoader(_PatchingLoader):
    def exec_module(self, module):
        self.patch(module)


def install():
    """Runs once per interpreter, before user code."""
    patches = {
        'hashlib': _patch_hashlib,
        'zoneinfo._common': _patch_zoneinfo_common,
        'zoneinfo._tzpath': _patch_zoneinfo_tzpath,
        'httpcore._backends.auto': _patch_httpcore_auto,
    }
    for name, patch in patches.items():
        if name in sys.modules:
            patch(sys.modules[name])
    replacements = {'urllib3.contrib.emscripten': _replace_urllib3_emscripten}
    sys.meta_path.insert(0, _PatchOnImport(patches, replacements))
    _thread.start_new_thread = _thread.start_joinable_thread = _no_threads
    if hasattr(_thread, 'start_new'):
        _thread.start_new = _no_threads
    threading._start_joinable_thread = _no_threads
    asyncio.run = asyncio.runners.run = _no_blocking_run
    from pyodide.webloop import WebLoop
    WebLoop.run_until_complete = _no_run_until_complete
