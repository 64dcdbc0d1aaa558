ModelHiddenParams = dict(
    kplanes_config={
        'grid_dimensions': 2,
        'input_coordinate_dim': 4,
        'output_coordinate_dim': 32,
        'resolution': [64, 64, 64, 25]
    },
    multires=[1, 2],
    defor_depth=0,
    net_width=64,
    plane_tv_weight=0.0001,
    time_smoothness_weight=0.01,
    l1_time_planes=0.0001,
    weight_decay_iteration=0,
    bounds=1.6
)
OptimizationParams = dict(
    dataloader=False,
    iterations=20000,
    batch_size=1,
    coarse_iterations=3000,
    densify_until_iter=10_000,
    opacity_reset_interval=60000,
    # grid_lr_init = 0.0016,
    # grid_lr_final = 16,
    opacity_threshold_coarse=0.005,
    opacity_threshold_fine_init=0.005,
    opacity_threshold_fine_after=0.005,
    # pruning_interval = 2000
)
