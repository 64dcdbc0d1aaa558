import type { StageViewProps } from '../shared/types';

/** Placeholder while the view is built. */
export function DistributedView(props: StageViewProps) {
  return <section data-testid="distributed-stage">{props.stage.id}</section>;
}
