/**
 * `JSON.stringify(value, null, 2)` as pieces of about `size` characters: joined, the same text.
 * A scan's JSON is megabytes. Made whole it was one string V8 builds in parts and then copies
 * flat at its first search (two bytes a character once one message holds a `→`), and a buffer of
 * its size for the write: 1,600 page faults, which cost ~12 µs each on a virtual machine. In
 * pieces, each is searched and written while small, in memory that is used again.
 *
 * The top object (or array) is written member by member; an array in it (the findings) a few
 * elements at a time, each run of them JSON.stringify's own text at their depth.
 */

/** An array or plain object JSON writes member by member (no toJSON of its own). */
function container(v: unknown): v is Record<string, unknown> | unknown[] {
  if (typeof v !== 'object' || v === null) return false;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return Array.isArray(v) || proto === Object.prototype || proto === null;
}

/** JSON's text of `v` as a member of the top object or array; undefined where JSON leaves it out. */
function memberText(v: unknown): string | undefined {
  const t = JSON.stringify(v, null, 2) as string | undefined;
  // no JSON text holds a raw newline but its own line breaks
  return t !== undefined && t.includes('\n') ? t.replace(/\n/g, '\n  ') : t;
}

/**
 * JSON's text of `items`, elements of an array that is a member of the top object: stringified
 * as the elements of an array inside an array, they are indented as they are in the whole text
 * (no pass over it to indent them); what is between the two arrays' brackets is theirs.
 */
function elementsText(items: unknown[]): string {
  const t = JSON.stringify([items], null, 2);
  // "[\n  [\n    " … "\n  ]\n]"
  return t.slice(10, -6);
}

export function* jsonPieces(value: unknown, size = 16_384): Generator<string> {
  let parts: string[] = [];
  let length = 0;
  const add = (s: string) => {
    parts.push(s);
    length += s.length;
  };
  const take = () => {
    const s = parts.join('');
    parts = [];
    length = 0;
    return s;
  };

  /** An array member of the top object, a run of elements at a time, each run about `size`. */
  function* elements(list: unknown[]): Generator<string> {
    if (!list.length) return add('[]');
    add('[\n    ');
    let run = 1;
    for (let i = 0; i < list.length;) {
      const text = elementsText(list.slice(i, i + run));
      if (length && length + text.length > size) yield take();
      add(i ? `,\n    ${text}` : text);
      i += run;
      // as many elements as made about `size` the last time
      run = Math.max(1, Math.min(1024, Math.floor((run * size) / Math.max(1, text.length))));
    }
    add('\n  ]');
  }

  if (!container(value)) {
    const whole = JSON.stringify(value, null, 2) as string | undefined;
    // JSON.stringify has no text for undefined or a function: no pieces
    if (whole !== undefined) yield whole;
    return;
  }
  if (Array.isArray(value)) {
    // an array at the top: its elements, indented one level less than a member's
    if (!value.length) return yield '[]';
    add('[');
    for (let i = 0; i < value.length; i++) {
      add(i ? ',\n  ' : '\n  ');
      add(memberText(value[i]) ?? 'null');
      if (length >= size) yield take();
    }
    add('\n]');
  } else {
    let first = true;
    for (const key of Object.keys(value)) {
      const item = value[key];
      const list = Array.isArray(item) && container(item) ? item : null;
      const text = list ? '' : memberText(item);
      // undefined, a function: JSON leaves the member out
      if (text === undefined) continue;
      add(`${first ? '{' : ','}\n  ${JSON.stringify(key)}: `);
      first = false;
      if (list) yield* elements(list);
      else add(text);
      if (length >= size) yield take();
    }
    add(first ? '{}' : '\n}');
  }
  yield take();
}
