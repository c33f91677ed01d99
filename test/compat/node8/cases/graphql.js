const { graphql, buildSchema } = require('graphql');

const schema = buildSchema('type Query { hello(name: String): String, sum(a: Int!, b: Int!): Int }');
const root = { hello: ({ name }) => `Hello ${name ?? 'world'}`, sum: ({ a, b }) => a + b };

exports.handler = async () => {
  const ok = await graphql({ schema, source: '{ hello(name: "Ada") sum(a: 2, b: 3) }', rootValue: root });
  const bad = await graphql({ schema, source: '{ nope }', rootValue: root });
  return { data: ok.data, error: bad.errors[0].message };
};
