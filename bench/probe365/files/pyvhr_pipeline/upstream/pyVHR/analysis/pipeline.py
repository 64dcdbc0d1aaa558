import numpy as np
import time
from importlib import import_module, util

from pyVHR.datasets.dataset import datasetFactory
from pyVHR.utils.errors import getErrors, printErrors, displayErrors
from pyVHR.extraction.sig_processing import *
from pyVHR.extraction.sig_extraction_methods import *
from pyVHR.extraction.skin_extraction_methods import *
from pyVHR.BVP.BVP import *
from pyVHR.BPM.BPM import *
from pyVHR.BVP.methods import *
from pyVHR.BVP.filters import *
from pyVHR.extraction.utils import *


class Pipeline():
    """
    This class runs the pyVHR pipeline on a single video or dataset
    """

    minHz = 0.65  # min heart frequency in Hz
    maxHz = 4.0   # max heart frequency in Hz

    def __init__(self):
        pass

    def run_on_video(self, videoFileName, cuda=True, roi_method='convexhull', roi_approach='holistic',
                     method='cupy_POS', bpm_type='welch', pre_filt=False, post_filt=True, verb=True):
        """
        Runs the pipeline on a specific video file.

        Args:
            videoFileName:
                - The path to the video file to analyse
            cuda:
                - True - Enable computations on GPU
                - False - Use CPU only
            roi_method:
                - 'convexhull' - Uses MediaPipe's lanmarks to compute the convex hull of the face and segment the skin
                - 'faceparsing' - Uses BiseNet to parse face components and segment the skin
            roi_approach:
                - 'holistic' - Use the Holistic approach (one single ROI defined as the whole face skin region of the subject)
                - 'patches' - Use multiple patches as Regions of Interest
            method:
                - One of the rPPG methods defined in pyVHR
            bpm_type:
                - the method for computing the BPM estimate on a time window
            pre_filt:
                - True - Use Band pass filter on the windowed RGB signal
                - False - No pre-filtering
            post_filt:
                - True - Use Band pass filter on the estimated BVP signal
                - False - No post-filtering
            verb:
               - False - not verbose
               - True - show the main steps
        """
        ldmks_list = [2, 3, 4, 5, 6, 8, 9, 10, 18, 21, 32, 35, 36, 43, 46, 47, 48, 50, 54, 58, 67, 68, 69, 71, 92, 93, 101, 103, 104,
                      108, 109, 116, 117, 118, 123, 132, 134, 135, 138, 139, 142, 148, 149, 150, 151, 152, 182, 187, 188, 193, 197,
                      201, 205, 206, 207, 210, 211, 212, 216, 234, 248, 251, 262, 265, 266, 273, 277, 278, 280, 284, 288, 297, 299,
                      322, 323, 330, 332, 333, 337, 338, 345, 346, 361, 363, 364, 367, 368, 371, 377, 379, 411, 412, 417, 421, 425,
                      426, 427, 430, 432, 436]
        assert os.path.isfile(videoFileName), "\nThe provided video file does not exists!"

        sig_processing = SignalProcessing()
        av_meths = getmembers(pyVHR.BVP.methods, isfunction)
        available_methods = [am[0] for am in av_meths]

        assert method in available_methods, "\nrPPG method not recognized!!"

        if cuda:
            sig_processing.display_cuda_device()
            sig_processing.choose_cuda_device(0)

        ## 1. set skin extractor
        target_device = 'GPU' if cuda else 'CPU'
        if roi_method == 'convexhull':
            sig_processing.set_skin_extractor(SkinExtractionConvexHull(target_device))
        elif roi_method == 'faceparsing':
            sig_processing.set_skin_extractor(SkinExtractionFaceParsing(target_device))
        else:
            raise ValueError("Unknown 'roi_method'")

        ## 2. set patches
        if roi_approach == 'patches':
            sig_processing.set_landmarks(ldmks_list)
            # set squares patches side dimension
            sig_processing.set_square_patches_side(28.0)

        # set sig-processing and skin-processing params
        SignalProcessingParams.RGB_LOW_TH = 75
        SignalProcessingParams.RGB_HIGH_TH = 230
        SkinProcessingParams.RGB_LOW_TH = 75
        SkinProcessingParams.RGB_HIGH_TH = 230

        if verb:
            print('\nProcessing Video: ' + videoFileName)
        fps = get_fps(videoFileName)
        sig_processing.set_total_frames(0)

        ## 3. ROI selection
        if roi_approach == 'holistic':
            # SIG extraction with holistic
            sig = sig_processing.extract_holistic(videoFileName)
        elif roi_approach == 'patches':
            # SIG extraction with patches
            sig = sig_processing.extract_patches(videoFileName, 'squares', 'mean')

        ## 4. sig windowing
        windowed_sig, timesES = sig_windowing(sig, 6, 1, fps)

        ## 5. PRE FILTERING
        if verb:
            print(' - Pre-filtering applied: ' + str(pre_filt))
        filtered_windowed_sig = windowed_sig

        if pre_filt:
            module = import_module('pyVHR.BVP.filters')
            method_to_call = getattr(module, 'BPfilter')
            filtered_windowed_sig = apply_filter(windowed_sig,
                                                 method_to_call,
                                                 fps=fps,
                                                 params={'minHz': Pipeline.minHz,
                                                         'maxHz': Pipeline.maxHz,
                                                         'fps': 'adaptive',
                                                         'order': 6})
        if verb:
            print(' - Extraction approach: ' + roi_approach)

        ## 6. BVP extraction multimethods
        if verb:
            print(' - Extraction method: ' + method)
        module = import_module('pyVHR.BVP.methods')
        method_to_call = getattr(module, method)

        if 'cpu' in method:
            method_device = 'cpu'
        elif 'torch' in method:
            method_device = 'torch'
        elif 'cupy' in method:
            method_device = 'cuda'

        if 'POS' in method:
            pars = {'fps': 'adaptive'}
        elif 'PCA' in method or 'ICA' in method:
            pars = {'component': 'all_comp'}
        else:
            pars = {}

        bvps = RGB_sig_to_BVP(filtered_windowed_sig, fps,
                              device_type=method_device, method=method_to_call, params=pars)

        ## 7. POST FILTERING
        if verb:
            print(' - Post-filtering applied: ' + str(post_filt))
        if post_filt:
            module = import_module('pyVHR.BVP.filters')
            method_to_call = getattr(module, 'BPfilter')
            bvps = apply_filter(bvps,
                                method_to_call,
                                fps=fps,
                                params={'minHz': Pipeline.minHz, 'maxHz': Pipeline.maxHz, 'fps': 'adaptive', 'order': 6})

        if verb:
            print(' - BPM estimation with: ' + bpm_type)
        ## 8. BPM extraction
        if bpm_type == 'welch':
            if cuda:
                bpmES = BVP_to_BPM_cuda(bvps, fps, minHz=Pipeline.minHz, maxHz=Pipeline.maxHz)
            else:
                bpmES = BVP_to_BPM(bvps, fps, minHz=Pipeline.minHz, maxHz=Pipeline.maxHz)
        elif bpm_type == 'psd_clustering':
            bpmES = BPM_clustering(sig_processing, bvps, 6, movement_thrs=[10, 5, 2], fps=fps, opt_factor=0.5)
        else:
            raise ValueError("Unknown 'bpm_type'")

        ## 9. BPM median and MAD
        if roi_approach == 'patches':
            bpmES, MAD = BPM_median(bpmES)
        elif roi_approach == 'holistic':
            bpmES = np.array(bpmES).squeeze()
            MAD = np.zeros_like(bpmES)

        if verb:
            print('\n...done!\n')

        return timesES, bpmES, MAD

    def run_on_dataset(self, configFilename, verb=True):
        """
        Runs the tests as specified in the loaded config file.

        Args:
            configFilename:
                - The path to the configuration file
            verb:
                - False - not verbose
                - True - show the main steps
        """
        self.configFilename = configFilename
        self.parse_cfg(self.configFilename)
        # -- cfg parser
        self.parse_cfg(self.configFilename)
        # -- verbose prints
        if verb:
            self.__verbose('a')

        # -- dataset & cfg params
        if 'path' in self.datasetdict and self.datasetdict['path'] != 'None':
            dataset = datasetFactory(self.datasetdict['dataset'], videodataDIR=self.datasetdict['videodataDIR'],
                                     BVPdataDIR=self.datasetdict['BVPdataDIR'], path=self.datasetdict['path'])
        else:
            dataset = datasetFactory(self.datasetdict['dataset'], videodataDIR=self.datasetdict['videodataDIR'],
                                     BVPdataDIR=self.datasetdict['BVPdataDIR'])

        # -- catch data (object)
        res = TestResult()

        # load all the videos
        if self.videoIdx == []:
            self.videoIdx = [int(v) for v in range(len(dataset.videoFilenames))]

        # -- loop on videos
        for v in self.videoIdx:
            fname = dataset.getSigFilename(v)
            sigGT = dataset.readSigfile(fname)
            winSizeGT = int(self.sigdict['winSize'])
            bpmGT, timesGT = sigGT.getBPM(winSizeGT)
            videoFileName = dataset.getVideoFilename(v)
            print('\nProcessing Video ' + videoFileName)
            for m in self.methodsdict.keys():
                t0 = time.time()
                timesES, bpmES, MAD = self.run_on_video(videoFileName,
                                                        cuda=self.sigdict['cuda'] == 'True',
                                                        roi_method=self.sigdict['roi_method'],
                                                        roi_approach=self.sigdict['approach'],
                                                        method=self.methodsdict[m]['method'],
                                                        bpm_type=self.bvpdict['type'],
                                                        verb=False)
                RMSE, MAE, MAX, PCC, CCC, SNR = getErrors(bpmES, bpmGT, timesES, timesGT)
                res.newDataSerie()
                res.addData('dataset', str(self.datasetdict['dataset']))
                res.addData('method', str(m))
                res.addData('videoIdx', v)
                res.addData('RMSE', RMSE)
                res.addData('MAE', MAE)
                res.addData('PCC', PCC)
                res.addData('time', time.time() - t0)
                res.addDataSerie()
                if verb:
                    printErrors(RMSE, MAE, MAX, PCC, CCC, SNR)
        return res
