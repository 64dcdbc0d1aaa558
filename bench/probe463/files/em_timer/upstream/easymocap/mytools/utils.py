'''
  @ Date: 2021-01-15 11:12:00
  @ Author: Qing Shuai
  @ LastEditors: Qing Shuai
  @ LastEditTime: 2021-04-19 17:02:51
  @ FilePath: /EasyMocapRelease/easymocap/mytools/utils.py
'''
import time
import tabulate


class Timer:
    records = {}
    tmp = None

    @classmethod
    def tic(cls):
        cls.tmp = time.time()

    @classmethod
    def toc(cls):
        res = (time.time() - cls.tmp) * 1000
        cls.tmp = None
        return res

    @classmethod
    def report(cls):
        header = ['', 'Time(ms)']
        contents = []
        for key, val in cls.records.items():
            contents.append(['{:20s}'.format(key), '{:.2f}'.format(sum(val)/len(val))])
        print(tabulate.tabulate(contents, header, tablefmt='fancy_grid'))

    def __init__(self, name, silent=False, sync_cuda=False):
        self.name = name
        self.silent = silent
        self.sync_cuda = sync_cuda
        if name not in Timer.records.keys():
            Timer.records[name] = []

    def _sync(self):
        # kernels are launched asynchronously; without a device sync the
        # timer would only measure the launch overhead of the GPU work
        if not self.sync_cuda:
            return
        import torch
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def __enter__(self):
        self._sync()
        self.start = time.time()
        return self

    def __exit__(self, exc_type, exc_value, exc_tb):
        self._sync()
        end = time.time()
        Timer.records[self.name].append((end-self.start)*1000)
        if not self.silent:
            t = (end - self.start)*1000
            if t > 1000:
                print('-> [{:20s}]: {:5.1f}s'.format(self.name, t/1000))
            elif t > 1e3*60*60:
                print('-> [{:20s}]: {:5.1f}min'.format(self.name, t/1e3/60))
            else:
                print('-> [{:20s}]: {:5.1f}ms'.format(self.name, (end-self.start)*1000))


def log(text):
    myprint(text, 'info')


def log_time(text):
    strf = get_time()
    print(strf, text)


def mywarn(text):
    myprint(text, 'warn')


colors_table = {
    'info': '\033[94m',
    'warn': '\033[93m',
    'error': '\033[91m',
    'time': '\033[92m',
    'reset': '\033[0m'
}


def myprint(text, level='info'):
    print(colors_table[level] + text + colors_table['reset'])


def get_time():
    return time.strftime('%Y-%m-%d %H:%M:%S', time.localtime())


def myerror(text):
    myprint(text, 'error')


def run_cmd(cmd, verbo=True, bg=False):
    import os
    if verbo:
        myprint('[run] ' + cmd, 'info')
    if bg:
        args = cmd.split()
        print(args)
        import subprocess
        p = subprocess.Popen(args)
        return [p]
    else:
        os.system(cmd)
        return []


def check_exists(path):
    import os
    flag1 = os.path.isfile(path) and os.path.getsize(path) > 0
    flag2 = os.path.isdir(path) and len(os.listdir(path)) > 0
    return flag1 or flag2


def mkdir(path):
    import os
    if os.path.exists(path):
        return 0
    log('mkdir {}'.format(path))
    os.makedirs(path, exist_ok=True)
