/**
 * The operations between a request body's guest halves (the fetch library's Request, the
 * http-server library's IncomingMessage) and its host half (host.ts): a call whose body was still
 * arriving when it started gets the body's id in place of its bytes, and reads it a chunk at a time
 * (`bodyRead`: the bytes as the answer's body, payload `{"done":true}` at the end) or whole
 * (`bodyWhole`: the text as the payload when it is UTF-8, otherwise the bytes as the body).
 */
import { count, object } from '../schema';

export const REQUEST_BODY_OPS = {
  bodyRead: object({ id: count() }),
  bodyWhole: object({ id: count() }),
  bodyCancel: object({ id: count() }),
};

/** The most one `bodyRead` answers. */
export const BODY_READ_BYTES = 1024 * 1024;
