import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * An action that asks first: `ask` opens it, then `confirm` does it or Cancel closes it. The focus
 * follows (onto the confirming button, back onto the first one), so a keyboard user never loses
 * their place when the buttons change.
 */
export function Confirm({ ask, askLabel, confirm, busy, onConfirm }: { ask: string; askLabel?: string; confirm: string; busy: boolean; onConfirm: () => void }) {
  const [open, setOpen] = useState(false);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const askButton = useRef<HTMLButtonElement>(null);
  const moved = useRef(false);
  useEffect(() => {
    if (!moved.current) return;
    (open ? confirmButton : askButton).current?.focus();
  }, [open]);
  const toggle = (next: boolean) => {
    moved.current = true;
    setOpen(next);
  };
  if (!open) {
    return (
      <button ref={askButton} type="button" class="quiet" onClick={() => toggle(true)} aria-label={askLabel}>
        {ask}
      </button>
    );
  }
  return (
    <>
      <button ref={confirmButton} type="button" class="danger" disabled={busy} onClick={onConfirm}>
        {confirm}
      </button>{' '}
      <button type="button" class="quiet" onClick={() => toggle(false)}>
        Cancel
      </button>
    </>
  );
}
