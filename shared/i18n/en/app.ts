export const app = {
  name: 'Ascend Migration Workbench',
  shortName: 'AMW',
  tagline: 'Move PyTorch from CUDA GPUs to Ascend NPUs, with evidence.',
} as const;
