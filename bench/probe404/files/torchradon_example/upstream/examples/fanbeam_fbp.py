"""Fan-beam forward projection + filtered back-projection of a Shepp-Logan phantom."""
import time
import numpy as np
import torch
import matplotlib.pyplot as plt
from skimage.data import shepp_logan_phantom
from skimage.transform import resize

from torch_radon import RadonFanbeam

device = torch.device('cuda')

image_size = 256
n_angles = 360
source_distance = 2 * image_size
det_count = int(np.sqrt(2) * image_size + 0.5)

img = resize(shepp_logan_phantom(), (image_size, image_size)).astype(np.float32)
angles = np.linspace(0, 2 * np.pi, n_angles, endpoint=False)

radon = RadonFanbeam(image_size, angles, source_distance, det_count=det_count)

with torch.no_grad():
    x = torch.FloatTensor(img).to(device)

    # warm-up (texture allocation happens at the first call)
    radon.forward(x)
    torch.cuda.synchronize()

    s = time.time()
    sinogram = radon.forward(x)
    filtered_sinogram = radon.filter_sinogram(sinogram)
    fbp = radon.backprojection(filtered_sinogram)
    torch.cuda.synchronize()  # make sure all kernels finished before reading the clock
    print("Forward + FBP time: {:.2f} ms".format((time.time() - s) * 1000))

fbp = fbp.cpu().numpy()
print("FBP Error", np.linalg.norm(img - fbp) / np.linalg.norm(img))

fig, ax = plt.subplots(1, 3, figsize=(12, 4))
ax[0].imshow(img, cmap="gray")
ax[0].set_title("Original Image")
ax[1].imshow(sinogram.cpu().numpy(), cmap="gray", aspect="auto")
ax[1].set_title("Sinogram")
ax[2].imshow(fbp, cmap="gray")
ax[2].set_title("Filtered Backprojection")
fig.tight_layout()
plt.show()


# ---------------------------------------------------------------------------
# Half precision batch (batch size must be a multiple of 4)
# ---------------------------------------------------------------------------
batch = torch.FloatTensor(np.stack([img] * 8)).to(device).half()
with torch.no_grad():
    sino_half = radon.forward(batch)
    rec_half = radon.backprojection(radon.filter_sinogram(sino_half))
err_half = torch.norm(rec_half[0].float() - torch.from_numpy(fbp).to(device)) / torch.norm(torch.from_numpy(fbp).to(device))
print("Half vs float FBP relative difference: {:.2e}".format(err_half.item()))

# memory footprint of the texture cache + sinograms
print("Peak GPU memory: {:.1f} MB".format(torch.cuda.max_memory_allocated() / 2 ** 20))
