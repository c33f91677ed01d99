// URLPattern for node8 functions (urlpattern-polyfill), a library of its own: its parser is large.
export { URLPattern } from 'urlpattern-polyfill/urlpattern';
