import type { ReactNode } from 'react';
import { Icon } from './Icon';

/** The head of every page: its icon, its title, and whatever actions it offers on the right. */
export function PageHead(props: { icon: string; title: string; children?: ReactNode }) {
  return (
    <header className="page-head">
      <span className="page-icon">
        <Icon name={props.icon} size={22} />
      </span>
      <h1>{props.title}</h1>
      {props.children}
    </header>
  );
}
