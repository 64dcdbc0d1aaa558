import { msg, type Msg, type MsgParam } from '../../../../../shared/api/text';

/** A key of shared/stages/distributed/messages/collective.*.ts, in namespace stage-distributed. */
export const ct = (key: string, params?: Record<string, MsgParam>): Msg =>
  msg(`stage-distributed:collective.${key}`, params);
