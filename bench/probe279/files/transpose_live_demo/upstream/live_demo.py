r"""
    Live demo: read 6 Noitom Perception Neuron IMUs from Axis Studio (BVH broadcast disabled, raw sensor
    data on UDP), run TransPose online on the GPU and stream pose + translation to a Unity client.

    Usage:
        1. Start Axis Studio, calibrate the sensors, enable "Broadcasting -> Sensor" (UDP 7004).
        2. Start the Unity scene (it listens on config.unity_port).
        3. python live_demo.py [--gpu 0] [--no-physics]
"""

import argparse
import socket
import threading
import time
from datetime import datetime

import numpy as np
import torch
from pygame.time import Clock

import articulate as art
from config import *
from net import TransPoseNet


class IMUSet:
    r"""
    Sensor order: left forearm, right forearm, left lower leg, right lower leg, head, pelvis
    """
    def __init__(self, imu_host='127.0.0.1', imu_port=7004, buffer_len=40):
        """
        Init an IMUSet for Noitom Perception Neuron IMUs. Please make sure `Axis Studio` is running and
        broadcasting sensor data with UDP to imu_port.

        :param imu_host: The host that `Axis Studio` runs on.
        :param imu_port: The UDP port set in `Axis Studio`.
        :param buffer_len: Max number of frames in the readonly buffer.
        """
        self.imu_host = imu_host
        self.imu_port = imu_port
        self.clock = Clock()

        self._imu_socket = None
        self._buffer_len = buffer_len
        self._quat_buffer = []
        self._acc_buffer = []
        self._is_reading = False
        self._read_thread = None

    def _read(self):
        """
        The thread that reads imu measurements into the buffer. It is a producer for the buffer.
        """
        data = ''
        while self._is_reading:
            data += self._imu_socket.recv(1024).decode('ascii')
            strs = data.split(' ', 8)
            if len(strs) >= 8 and strs[0] == '0' and strs[-1].endswith('||'):
                data = data[len(' '.join(strs[:8])) + 1:]
                continue
            if data.find('|') < 0:
                continue
            frame, data = data.split('|', 1)
            values = frame.split(' ')
            values = [float(v) for v in values if v.strip() != '' and v != '0']
            if len(values) < 6 * 16:
                continue
            q, a = [], []
            for i in range(6):
                q.append(values[i * 16 + 6:i * 16 + 10])   # w x y z
                a.append(values[i * 16 + 10:i * 16 + 13])  # x y z (in g)
            self._quat_buffer = (self._quat_buffer + [q])[-self._buffer_len:]
            self._acc_buffer = (self._acc_buffer + [a])[-self._buffer_len:]
            self.clock.tick()

    def start_reading(self):
        """
        Start reading imu measurements into the buffer.
        """
        if self._read_thread is None:
            self._is_reading = True
            self._imu_socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._imu_socket.bind((self.imu_host, self.imu_port))
            self._read_thread = threading.Thread(target=self._read)
            self._read_thread.setDaemon(True)
            self._read_thread.start()
        else:
            print('Failed to start reading thread: reading is already start.')

    def stop_reading(self):
        """
        Stop reading imu measurements.
        """
        if self._read_thread is not None:
            self._is_reading = False
            self._read_thread.join()
            self._read_thread = None
            self._imu_socket.close()
            self._imu_socket = None

    def get_current_buffer(self):
        """
        Get a view of current buffer.

        :return: Quaternion and acceleration torch.Tensor in shape [buffer_len, 6, 4] and [buffer_len, 6, 3].
        """
        q = torch.tensor(self._quat_buffer, dtype=torch.float)
        a = torch.tensor(self._acc_buffer, dtype=torch.float)
        return q, a

    def get_mean_measurement_of_n_second(self, num_seconds=3, buffer_len=120):
        """
        Start reading for `num_seconds` seconds and then close the connection. The average of the last
        `buffer_len` frames of the measured quaternions and accelerations are returned.
        Note that this function is blocking.

        :param num_seconds: How many seconds to read.
        :param buffer_len: Buffer length. Must be smaller than 60 * `num_seconds`.
        :return: The mean quaternion and acceleration torch.Tensor in shape [6, 4] and [6, 3] respectively.
        """
        save_buffer_len = self._buffer_len
        self._buffer_len = buffer_len
        self.start_reading()
        time.sleep(num_seconds)
        self.stop_reading()
        q, a = self.get_current_buffer()
        self._buffer_len = save_buffer_len
        return q.mean(dim=0), a.mean(dim=0)


def get_input():
    global running, start_recording
    while running:
        c = input()
        if c == 'q':
            running = False
        elif c == 'r':
            start_recording = True
        elif c == 's':
            start_recording = False


def tpose_calibration(imu_set):
    c = input('Used cached RMI? [y]/n    (If you choose no, put imu 1 straight (x = Right, y = Forward, z = Down, Left-handed).')
    if c == 'n' or c == 'N':
        imu_set.clock.tick()
        RMI = art.math.quaternion_to_rotation_matrix(imu_set.get_mean_measurement_of_n_second(num_seconds=3, buffer_len=200)[0][0])
        RMI = RMI.view(3, 3).t()
        torch.save(RMI, os.path.join(paths.temp_dir, 'RMI.pt'))
    else:
        RMI = torch.load(os.path.join(paths.temp_dir, 'RMI.pt'))
    print(RMI)

    input('Stand straight in T-pose and press enter. The calibration will begin in 3 seconds')
    time.sleep(3)
    oris = imu_set.get_mean_measurement_of_n_second(num_seconds=3, buffer_len=200)[0]
    RIS = art.math.quaternion_to_rotation_matrix(oris)
    RSB = RMI.matmul(RIS).transpose(1, 2).matmul(torch.eye(3))  # = (R_MI R_IS)^T R_MB = R_SB
    return RMI, RSB


def parse_args():
    parser = argparse.ArgumentParser(description='TransPose live demo')
    parser.add_argument('--gpu', type=int, default=0, help='GPU id used for the network')
    parser.add_argument('--record', default='', help='save the captured sequence to this file')
    parser.add_argument('--imu-host', default='127.0.0.1')
    parser.add_argument('--replay', default='', help='replay a recorded record_*.pt instead of live sensors')
    return parser.parse_args()


if __name__ == '__main__':
    args = parse_args()
    torch.set_grad_enabled(False)
    paths.temp_dir = 'temp'
    os.makedirs(paths.temp_dir, exist_ok=True)

    # pin this process to the selected GPU (the SMPL model stays on CPU)
    torch.cuda.set_device(args.gpu)
    run_device = torch.device('cuda', args.gpu)
    print('Running TransPose on', torch.cuda.get_device_name(args.gpu))

    if args.replay:
        # offline replay of a recording (network input already normalised) -> Unity
        net = TransPoseNet(num_past_frame=20, num_future_frame=5).to(run_device)
        frames = torch.load(args.replay).to(run_device)
        server_for_unity = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server_for_unity.bind((unity_ip, unity_port))
        server_for_unity.listen(1)
        conn, addr = server_for_unity.accept()
        clock = Clock()
        for f in frames:
            clock.tick(60)
            pose, tran = net.forward_online(f)
            pose = art.math.rotation_matrix_to_axis_angle(pose).view(-1, 72)
            s = ','.join(['%g' % v for v in pose.view(-1)]) + '#' + ','.join(['%g' % v for v in tran.view(-1)]) + '$'
            conn.send(s.encode('utf8'))
        print('replay finished (%d frames)' % frames.shape[0])
        raise SystemExit(0)

    imu_set = IMUSet(imu_host=args.imu_host, imu_port=noitom_port, buffer_len=1)
    RMI, RSB = tpose_calibration(imu_set)
    net = TransPoseNet(num_past_frame=20, num_future_frame=5).to(run_device)

    # warm up cuDNN LSTM kernels so the first live frame is not slow
    dummy = torch.zeros(72, device=run_device)
    for _ in range(10):
        net.forward_online(dummy)
    net.reset()
    torch.cuda.synchronize()

    imu_set.start_reading()

    server_for_unity = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server_for_unity.bind((unity_ip, unity_port))
    server_for_unity.listen(1)
    print('Server start. Waiting for unity3d to connect.')
    conn, addr = server_for_unity.accept()

    running = True
    clock = Clock()
    is_recording = False
    record_buffer = None
    start_recording = False

    get_input_thread = threading.Thread(target=get_input)
    get_input_thread.setDaemon(True)
    get_input_thread.start()

    while running:
        # calibration
        clock.tick(60)
        ori_raw, acc_raw = imu_set.get_current_buffer()   # [1, 6, 4], get measurements in running fps
        ori_raw = art.math.quaternion_to_rotation_matrix(ori_raw).view(1, 6, 3, 3)
        acc_cal = (RMI.matmul(acc_raw.view(-1, 6, 3, 1)) * 9.8).view(1, 6, 3)
        ori_cal = RMI.matmul(ori_raw).matmul(RSB)

        # normalization
        acc = torch.cat((acc_cal[:, :5] - acc_cal[:, 5:], acc_cal[:, 5:]), dim=1).bmm(ori_cal[:, -1]) / acc_scale
        ori = torch.cat((ori_cal[:, 5:].transpose(2, 3).matmul(ori_cal[:, :5]), ori_cal[:, 5:]), dim=1)
        data_nn = torch.cat((acc.view(-1, 18), ori.view(-1, 54)), dim=1).cuda(args.gpu)
        pose, tran = net.forward_online(data_nn)
        pose = art.math.rotation_matrix_to_axis_angle(pose).view(-1, 72)

        # recording
        if not is_recording and start_recording:
            record_buffer = data_nn.view(1, -1)
            is_recording = True
        elif is_recording and start_recording:
            record_buffer = torch.cat([record_buffer, data_nn.view(1, -1)], dim=0)
        elif is_recording and not start_recording:
            torch.save(record_buffer.cpu(), os.path.join(paths.temp_dir, 'record_%s.pt' % datetime.now().strftime('%Y%m%d%H%M%S')))
            is_recording = False

        # send pose
        s = ','.join(['%g' % v for v in pose.view(-1)]) + '#' + \
            ','.join(['%g' % v for v in tran.view(-1)]) + '$'
        conn.send(s.encode('utf8'))  # I use unity3d to read pose and translation for visualization here

        print('\r', 'Sensor FPS:', imu_set.clock.get_fps(), '\tOutput FPS:', clock.get_fps(), end='')

    get_input_thread.join()
    imu_set.stop_reading()
    print('Finish.')
