import { defineSharedStage, stageInput } from '../define';
import { en } from './messages/en';
import { zhCN } from './messages/zh-CN';

/** Environment: the host's versions, drivers, devices, env script and limits, in one probe. */
export const envStage = defineSharedStage({
  id: 'env',
  runsOn: 'host',
  input: stageInput('env', 'host', {}),
  messages: { en, 'zh-CN': zhCN },
});
