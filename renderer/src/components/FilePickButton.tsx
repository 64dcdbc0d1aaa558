import { useRef, type ReactNode } from 'react';

/**
 * A button that opens the file chooser. A `<label>` around a hidden input looks the same but is
 * not reachable with Tab, so the button clicks the input itself.
 */
export function FilePickButton(props: {
  children: ReactNode;
  accept?: string;
  testId: string;
  onFile: (file: File) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" data-testid={props.testId} onClick={() => input.current?.click()}>
        {props.children}
      </button>
      <input
        ref={input}
        type="file"
        accept={props.accept}
        hidden
        data-testid={`${props.testId}-file`}
        onChange={(e) => {
          const f = e.target.files?.[0];
          if (f) props.onFile(f);
          e.target.value = '';
        }}
      />
    </>
  );
}
