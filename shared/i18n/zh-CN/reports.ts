import type { Messages } from '../en';

export const reports: Messages['reports'] = {
  source: '报告对象',
  pick: '选择一个会话或已导入的报告',
  sessions: '会话',
  imported: '已导入（只读）',
  importedItem: '{{title}}（会话 #{{id}}，{{at}}，导入）',
  language: '报告语言',
  hideNames: '隐藏主机名和用户名',
  format: '格式',
  formats: {
    html: 'HTML（单文件，可打印）',
    md: 'Markdown（PR、Wiki）',
    json: 'JSON（可重新导入）',
    pdf: 'PDF',
    sarif: 'SARIF 2.1.0（代码发现）',
    junit: 'JUnit XML（每个检查一个用例）',
  },
  export: '导出',
  import: '导入 JSON 报告…',
  readOnly:
    '这是导入的报告：只读，供没有主机权限的同事评审。你的评论和结论保存在本地，并会写入它的下一次导出。',
  preview: '报告预览',
  yourName: '你的名字',
  about: '针对',
  aboutSession: '整个会话',
  aboutChecksIn: '未通过的检查 — {{stage}}',
  aboutFindingsIn: '代码发现 — {{file}}',
  aboutCheck: '{{title}} — {{host}}',
  comment: '评论',
  addComment: '添加评论',
  approve: '批准',
  requestChanges: '要求修改',
  approveBlocked:
    '无法批准：此会话仍被未豁免的失败检查阻塞。请先修复或豁免它们，或者提出修改要求。',
  reasonNeeded: '要求修改需要理由：请在评论框中写明需要修改什么。',
  approveNothingRan:
    '暂时无法批准：此会话还没有运行任何阶段。请先运行一个阶段；现在可以先添加评论。',
  nameNeeded: '每条评论和结论都会署名：请先填写你的名字，再评论或做出结论。',
  decisionWhole: '“批准”和“要求修改”针对整个会话；“关于”只用于评论。',
};
