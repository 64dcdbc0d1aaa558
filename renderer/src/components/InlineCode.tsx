import { Fragment } from 'react';

/** `code` spans in rule and doctor texts (written Markdown-style); other text stays as it is. */
const SPAN = /`([^`\n]+)`/g;

/** Shows a text's `code` spans as code; React escapes the rest, so nothing in it becomes markup. */
export function InlineCode(props: { text: string }) {
  const parts = props.text.split(SPAN);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 ? <code key={i}>{part}</code> : <Fragment key={i}>{part}</Fragment>,
      )}
    </>
  );
}

/** The same text for places that show only plain text (tooltips): the backticks dropped. */
export const plainText = (text: string): string => text.replace(SPAN, '$1');
