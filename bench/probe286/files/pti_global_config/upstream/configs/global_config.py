## Device
cuda_visible_devices = '0'
device = 'cuda:0'

## Logs
training_step = 1
image_rec_result_log_snapshot = 100
pivotal_training_steps = 0
model_snapshot_interval = 400

## Run name to be updated during PTI
run_name = ''
