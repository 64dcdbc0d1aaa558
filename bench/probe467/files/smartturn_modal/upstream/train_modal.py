import modal

app = modal.App("endpointing-training")

image = (
    modal.Image.debian_slim(python_version="3.12")
    .apt_install("ffmpeg", "libsndfile1")
    .pip_install_from_requirements("requirements.txt")
    .add_local_python_source("train", "model", "logger")
)

volume = modal.Volume.from_name("endpointing", create_if_missing=True)

# Cache the HF datasets across runs
hf_cache = modal.Volume.from_name("hf-cache", create_if_missing=True)


@app.function(
    image=image,
    gpu="L4",
    memory=16384,
    cpu=16.0,
    volumes={"/data": volume, "/root/.cache/huggingface": hf_cache},
    timeout=86400,
    secrets=[modal.Secret.from_name("wandb-secret")],
)
def training_run(run_name: str):
    import os

    import train

    os.chdir("/data")
    train.do_training_run(run_name)
    volume.commit()


@app.local_entrypoint()
def main(run_name: str = None):
    from datetime import datetime

    run_name = run_name or f"modal-{datetime.now().strftime('%Y-%m-%d_%H-%M')}"
    print(f"Launching {run_name} on Modal (1x L4)")
    training_run.remote(run_name)
