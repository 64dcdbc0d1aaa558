import torch
import numpy as np
import tinycudann as tcnn


def get_encoder(encoding, input_dim=3,
                degree=4, n_bins=16, n_frequencies=12,
                n_levels=16, level_dim=2,
                base_resolution=16, log2_hashmap_size=19,
                desired_resolution=512):

    # Dense grid encoding
    if 'dense' in encoding.lower():
        n_levels = 4
        per_level_scale = np.exp2(np.log2(desired_resolution / base_resolution) / (n_levels - 1))
        encoding_config = {
            "otype": "Grid",
            "type": "Dense",
            "n_levels": n_levels,
            "n_features_per_level": level_dim,
            "base_resolution": base_resolution,
            "per_level_scale": per_level_scale,
            "interpolation": "Linear"}

    # Sparse grid encoding
    elif 'hash' in encoding.lower() or 'tiled' in encoding.lower():
        print('Hash size', log2_hashmap_size)
        per_level_scale = np.exp2(np.log2(desired_resolution / base_resolution) / (n_levels - 1))
        encoding_config = {
            "otype": 'HashGrid',
            "n_levels": n_levels,
            "n_features_per_level": level_dim,
            "log2_hashmap_size": log2_hashmap_size,
            "base_resolution": base_resolution,
            "per_level_scale": per_level_scale}

    # Spherical harmonics encoding
    elif 'spherical' in encoding.lower():
        encoding_config = {
            "otype": "SphericalHarmonics",
            "degree": degree,
        }

    # OneBlob encoding
    elif 'blob' in encoding.lower():
        print('Use blob')
        encoding_config = {
            "otype": "OneBlob",  # Component type.
            "n_bins": n_bins
        }

    # Frequency encoding
    elif 'freq' in encoding.lower():
        print('Use frequency')
        encoding_config = {
            "otype": "Frequency",
            "n_frequencies": n_frequencies
        }

    # Identity encoding
    elif 'identity' in encoding.lower():
        encoding_config = {
            "otype": "Identity"
        }
    else:
        raise NotImplementedError('Unknown encoding: {}'.format(encoding))

    # all encodings are evaluated by tiny-cuda-nn (fully fused CUDA kernels)
    embed = tcnn.Encoding(n_input_dims=input_dim, encoding_config=encoding_config, dtype=torch.float)
    out_dim = embed.n_output_dims

    return embed, out_dim
