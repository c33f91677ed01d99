import chalk, { Chalk } from 'chalk';

export function handler() {
  const colored = new Chalk({ level: 1 });
  return { plain: chalk.level, styled: JSON.stringify(colored.red.bold('hi')) };
}
