import type { Db } from '../../electron/core/db/open';

/** Makes a database big enough (about `mb` MiB) that a backup takes many steps. */
export function fillDatabase(db: Db, mb: number): void {
  const insert = db.prepare(
    `INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, 'test', 'fill', ?, ?)`,
  );
  const detail = JSON.stringify({ pad: 'x'.repeat(1000) });
  const rows = mb * 1024;
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(new Date(0).toISOString(), `row-${i}`, detail);
  })();
}
