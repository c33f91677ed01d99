import YAML from 'yaml';

export function handler() {
  const doc = YAML.parse('functions:\n  hello:\n    runtime: node8\n    env:\n      KEY:\n');
  return { doc, text: YAML.stringify({ a: [1, { b: 'c' }] }) };
}
