// esbuild embeds .py files as text.
declare module '*.py' {
  const text: string;
  export default text;
}
