/**
 * `JSON.stringify(value, null, 2)` as pieces of about `size` characters: joined, the same text.
 * A scan's JSON is megabytes. Made whole it was one string V8 builds in parts and then copies
 * flat at its first search (two bytes a character once one message holds a `→`), and a buffer of
 * its size for the write: 1,600 page faults, which cost ~12 µs each on a virtual machine. In
 * pieces, each is searched and written while small, in memory that is used again.
 *
 * The top object and the arrays and plain objects in it are written here; what they hold (a
 * finding, a file) is JSON.stringify's own text, indented to its depth.
 */

const PAD = ['', '  ', '    '];
/** How deep the pieces go: the top object, its arrays (findings), and their elements' text. */
const DEPTH = 2;

/** An array or plain object JSON writes member by member (no toJSON of its own). */
function container(v: unknown, depth: number): v is Record<string, unknown> | unknown[] {
  if (depth >= DEPTH || typeof v !== 'object' || v === null) return false;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return Array.isArray(v) || proto === Object.prototype || proto === null;
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
  /** JSON's text of a value written whole at `depth`; undefined where JSON leaves it out. */
  const text = (v: unknown, depth: number): string | undefined => {
    const t = JSON.stringify(v, null, 2) as string | undefined;
    // no JSON text holds a raw newline but its own line breaks
    return t !== undefined && depth && t.includes('\n') ? t.replace(/\n/g, `\n${PAD[depth]}`) : t;
  };

  function* members(v: Record<string, unknown> | unknown[], depth: number): Generator<string> {
    const inner = `\n${PAD[depth + 1]}`;
    if (Array.isArray(v)) {
      if (!v.length) return add('[]');
      for (let i = 0; i < v.length; i++) {
        add(i ? `,${inner}` : `[${inner}`);
        const item = v[i];
        if (container(item, depth + 1)) yield* members(item, depth + 1);
        else add(text(item, depth + 1) ?? 'null');
        if (length >= size) yield take();
      }
      return add(`\n${PAD[depth]}]`);
    }
    let first = true;
    for (const key of Object.keys(v)) {
      const item = v[key];
      const whole = container(item, depth + 1) ? null : text(item, depth + 1);
      // undefined, a function: JSON leaves the member out
      if (whole === undefined) continue;
      add(`${first ? '{' : ','}${inner}${JSON.stringify(key)}: `);
      first = false;
      if (whole === null) yield* members(item as Record<string, unknown>, depth + 1);
      else add(whole);
      if (length >= size) yield take();
    }
    add(first ? '{}' : `\n${PAD[depth]}}`);
  }

  if (container(value, 0)) yield* members(value, 0);
  else {
    const whole = text(value, 0);
    // JSON.stringify has no text for undefined or a function: no pieces
    if (whole !== undefined) add(whole);
  }
  if (length) yield take();
}
