import argparse
import os
import lpips

parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
parser.add_argument('-d0', '--dir0', type=str, default='./imgs/ex_dir0')
parser.add_argument('-d1', '--dir1', type=str, default='./imgs/ex_dir1')
parser.add_argument('-o', '--out', type=str, default='./imgs/example_dists.txt')
parser.add_argument('-v', '--version', type=str, default='0.1')
parser.add_argument('--net', type=str, default='alex', help='backbone: alex | vgg | squeeze')
parser.add_argument('--all-pairs', action='store_true', help='turn on to test all N(N-1)/2 pairs, leave off to just do consecutive pairs')
parser.add_argument('-N', type=int, default=None)
parser.add_argument('--use_gpu', action='store_true', help='turn on flag to use GPU')

opt = parser.parse_args()

## Initializing the model
loss_fn = lpips.LPIPS(net=opt.net, version=opt.version)
if(opt.use_gpu):
    loss_fn.cuda()

# crawl directories
f = open(opt.out, 'w')
files = os.listdir(opt.dir0)
files = sorted(f0 for f0 in files if f0.lower().endswith(('.png', '.jpg', '.jpeg', '.bmp')))
if opt.N is not None:
    files = files[:opt.N]

dists = []
for file in files:
    if(os.path.exists(os.path.join(opt.dir1, file))):
        # Load images
        img0 = lpips.im2tensor(lpips.load_image(os.path.join(opt.dir0, file)))  # RGB image from [-1,1]
        img1 = lpips.im2tensor(lpips.load_image(os.path.join(opt.dir1, file)))

        if(opt.use_gpu):
            img0 = img0.cuda()
            img1 = img1.cuda()

        # Compute distance
        dist01 = loss_fn.forward(img0, img1)
        print('%s: %.3f' % (file, dist01))
        f.writelines('%s: %.6f\n' % (file, dist01))
        dists.append(dist01.item())

print('Mean LPIPS over %d pairs: %.4f' % (len(dists), sum(dists) / max(len(dists), 1)))
f.close()
