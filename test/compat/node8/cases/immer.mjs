import { produce } from 'immer';

export function handler() {
  const base = { todos: [{ text: 'a', done: false }] };
  const next = produce(base, (draft) => {
    draft.todos[0].done = true;
    draft.todos.push({ text: 'b', done: false });
  });
  return { base, next, sharedUnchanged: base !== next, frozen: Object.isFrozen(next) };
}
