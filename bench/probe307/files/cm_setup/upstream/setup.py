from setuptools import setup

setup(
    name="consistency-models",
    version="0.1",
    py_modules=["cm"],
    python_requires=">=3.8",
    install_requires=[
        "blobfile>=1.0.5",
        "torch>=1.13",
        "tqdm",
        "numpy",
        "scipy",
        "pandas",
        "Cython",
        "piq==0.7.0",
        "joblib==0.14.0",
        "albumentations==0.4.3",
        "lmdb",
        "clip @ git+https://github.com/openai/CLIP.git",
        "mpi4py",
        "flash-attn==0.2.8",
        "pillow",
    ],
    extras_require={
        # evaluator (FID / IS / precision-recall) runs on TensorFlow with CUDA
        "eval": ["tensorflow-gpu>=2.0", "requests"],
    },
)
