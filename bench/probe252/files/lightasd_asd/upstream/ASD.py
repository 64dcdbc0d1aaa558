import torch
import torch.nn as nn
import torch.nn.functional as F

import sys, time, numpy, os, subprocess, pandas, tqdm
from subprocess import PIPE

from loss import lossAV, lossV
from model.Model import ASD_Model

class ASD(nn.Module):
    def __init__(self, lr = 0.001, lrDecay = 0.95, **kwargs):
        super(ASD, self).__init__()
        self.model = ASD_Model().cuda()
        self.lossAV = lossAV().cuda()
        self.lossV = lossV().cuda()
        self.optim = torch.optim.Adam(self.parameters(), lr = lr)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optim, step_size = 1, gamma=lrDecay)
        print(time.strftime("%m-%d %H:%M:%S") + " Model para number = %.2f"%(sum(param.numel() for param in self.model.parameters()) / 1000 / 1000))

    def train_network(self, loader, epoch, **kwargs):
        self.train()
        self.scheduler.step(epoch - 1)  # StepLR
        index, top1, lossV, lossAV, loss = 0, 0, 0, 0, 0
        lr = self.optim.param_groups[0]['lr']
        r = 1.3 - 0.02 * (epoch - 1)
        for num, (audioFeature, visualFeature, labels) in enumerate(loader, start=1):
            self.zero_grad()

            audioFeature, visualFeature = audioFeature[0].cuda(), visualFeature[0].cuda()
            audioEmbed = self.model.forward_audio_frontend(audioFeature)
            visualEmbed = self.model.forward_visual_frontend(visualFeature)

            outsAV= self.model.forward_audio_visual_backend(audioEmbed, visualEmbed)
            outsV = self.model.forward_visual_backend(visualEmbed)

            labels = labels[0].reshape((-1)).cuda() # Loss
            nlossAV, _, _, prec = self.lossAV.forward(outsAV, labels, r)
            nlossV = self.lossV.forward(outsV, labels, r)
            nloss = nlossAV + 0.5 * nlossV

            lossV += nlossV.detach().cpu().numpy()
            lossAV += nlossAV.detach().cpu().numpy()
            loss += nloss.detach().cpu().numpy()
            top1 += prec
            nloss.backward()
            self.optim.step()
            index += len(labels)
            sys.stderr.write(time.strftime("%m-%d %H:%M:%S") + \
            " [%2d] r: %2f, Lr: %5f, Training: %.2f%%, "    %(epoch, r, lr, 100 * (num / loader.__len__())) + \
            " LossV: %.5f, LossAV: %.5f, Loss: %.5f, ACC: %2.2f%% \r"  %(lossV/(num), lossAV/(num), loss/(num), 100 * (top1/index)))
            sys.stderr.flush()

        sys.stdout.write("\n")

        return loss/num, lr

    def evaluate_network(self, loader, evalCsvSave, evalOrig, **kwargs):
        self.eval()
        predScores = []
        for audioFeature, visualFeature, labels in tqdm.tqdm(loader):
            with torch.no_grad():
                audioEmbed  = self.model.forward_audio_frontend(audioFeature[0].cuda())
                visualEmbed = self.model.forward_visual_frontend(visualFeature[0].cuda())
                outsAV= self.model.forward_audio_visual_backend(audioEmbed, visualEmbed)
                labels = labels[0].reshape((-1)).cuda()
                _, predScore, _, _ = self.lossAV.forward(outsAV, labels)
                predScore = predScore[:,1].detach().cpu().numpy()
                predScores.extend(predScore)
                # break
        evalLines = open(evalOrig).read().splitlines()[1:]
        labels = []
        labels = pandas.Series( ['SPEAKING_AUDIBLE' for line in evalLines])
        scores = pandas.Series(predScores)
        evalRes = pandas.read_csv(evalOrig)
        evalRes['score'] = scores
        evalRes['label'] = labels
        evalRes.drop(['label_id'], axis=1,inplace=True)
        evalRes.drop(['instance_id'], axis=1,inplace=True)
        evalRes.to_csv(evalCsvSave, index=False)
        cmd = "python -O utils/get_ava_active_speaker_performance.py -g %s -p %s "%(evalOrig, evalCsvSave)
        mAP = float(str(subprocess.run(cmd, shell=True, stdout=PIPE, stderr=PIPE).stdout).split(' ')[2][:5])
        return mAP

    @torch.no_grad()
    def measure_speed(self, numFrames = 1000, warmup = 20, repeat = 100):
        """Report the inference time for one face track of `numFrames` frames.
        Numbers in the paper were measured on a single RTX 3090 with this function."""
        self.eval()
        audio = torch.randn(1, numFrames * 4, 13, device = 'cuda')
        video = torch.randn(1, numFrames, 112, 112, device = 'cuda')
        for _ in range(warmup):
            self.model.forward_audio_visual_backend(self.model.forward_audio_frontend(audio), self.model.forward_visual_frontend(video))
        torch.cuda.synchronize() # wait for the warm-up kernels
        starter, ender = torch.cuda.Event(enable_timing = True), torch.cuda.Event(enable_timing = True)
        timings = []
        for _ in range(repeat):
            starter.record()
            self.model.forward_audio_visual_backend(self.model.forward_audio_frontend(audio), self.model.forward_visual_frontend(video))
            ender.record()
            torch.cuda.synchronize()
            timings.append(starter.elapsed_time(ender))
        meanMs = numpy.mean(timings)
        print("%d frames: %.2f ms / track, %.1f fps, peak mem %.1f MB" % (numFrames, meanMs, numFrames / meanMs * 1000, torch.cuda.max_memory_allocated() / 1024 / 1024))
        return meanMs

    def export_onnx(self, path, numFrames = 100):
        """Export the audio-visual scorer (frontends + backend) for TensorRT / onnxruntime.
        Dynamic axis is the number of frames; batch is always 1 (one face track)."""
        self.eval()

        class _Wrapper(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m
            def forward(self, audio, video):
                a = self.m.forward_audio_frontend(audio)
                v = self.m.forward_visual_frontend(video)
                return self.m.forward_audio_visual_backend(a, v)

        dummyA = torch.randn(1, numFrames * 4, 13).cuda()
        dummyV = torch.randn(1, numFrames, 112, 112).cuda()
        torch.onnx.export(_Wrapper(self.model), (dummyA, dummyV), path,
                          input_names = ['audio', 'video'], output_names = ['score'],
                          dynamic_axes = {'audio': {1: 'T4'}, 'video': {1: 'T'}, 'score': {0: 'T'}},
                          opset_version = 14)
        print("exported %s" % path)

    def saveParameters(self, path):
        torch.save(self.state_dict(), path)

    def loadParameters(self, path):
        selfState = self.state_dict()
        loadedState = torch.load(path, map_location = torch.device('cuda'))
        for name, param in loadedState.items():
            origName = name;
            if name not in selfState:
                name = name.replace("module.", "")
                if name not in selfState:
                    print("%s is not in the model."%origName)
                    continue
            if selfState[name].size() != loadedState[origName].size():
                sys.stderr.write("Wrong parameter length: %s, model: %s, loaded: %s"%(origName, selfState[name].size(), loadedState[origName].size()))
                continue
            selfState[name].copy_(param)
