import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { useTransport } from '../../api';
import { ErrorText } from '../../components/ErrorText';

/** An interactive shell on the host: xterm.js in the page, an ssh2 shell channel in the engine. */
export function TerminalView(props: { name: string; password?: string }) {
  const { t } = useTranslation();
  const transport = useTransport();
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [exited, setExited] = useState<number | null | undefined>(undefined);

  useEffect(() => {
    const term = new Terminal({
      cursorBlink: true,
      fontSize: 13,
      fontFamily: 'ui-monospace, Menlo, Consolas, monospace',
      convertEol: false,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current!);
    fit.fit();
    let id: string | null = null;
    let disposed = false;
    const offData = transport.on('terminal.data', (d) => {
      if (d.terminalId === id) term.write(d.data);
    });
    const offExit = transport.on('terminal.exit', (e) => {
      if (e.terminalId === id) setExited(e.code);
    });
    transport
      .call('terminal.open', {
        name: props.name,
        cols: term.cols,
        rows: term.rows,
        ...(props.password ? { password: props.password } : {}),
      })
      .then(({ terminalId }) => {
        if (disposed)
          return void transport.call('terminal.close', { terminalId }).catch(() => undefined);
        id = terminalId;
        term.focus();
      })
      .catch(setError);
    const input = term.onData((data) => {
      if (id)
        void transport.call('terminal.input', { terminalId: id, data }).catch(() => undefined);
    });
    const resize = term.onResize(({ cols, rows }) => {
      if (id)
        void transport
          .call('terminal.resize', { terminalId: id, cols, rows })
          .catch(() => undefined);
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(box.current!);
    return () => {
      disposed = true;
      observer.disconnect();
      input.dispose();
      resize.dispose();
      offData();
      offExit();
      if (id) void transport.call('terminal.close', { terminalId: id }).catch(() => undefined);
      term.dispose();
    };
  }, [props.name, props.password, transport]);

  return (
    <div>
      {error !== null && <ErrorText error={error} />}
      {exited !== undefined && (
        <p className="muted" data-testid="terminal-exited">
          {t('hosts.terminal.exited', { code: exited ?? '—' })}
        </p>
      )}
      <div className="terminal" ref={box} data-testid="terminal" />
      <p className="muted small">{t('hosts.terminal.hint')}</p>
    </div>
  );
}
