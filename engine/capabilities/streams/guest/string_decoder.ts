// node8's `string_decoder`: the string_decoder package (Node's own, published apart).
import decoder from 'string_decoder/';

export default decoder;
