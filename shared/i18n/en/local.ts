export const local = {
  button: 'This machine',
  hint: 'Run inventories and stages here, without SSH: for working on the NPU server itself or in a container on it.',
  address: 'this machine, no SSH',
} as const;
