import torch
import esim_cuda


class EventSimulator_torch(torch.nn.Module):
    """
    Event camera simulator (ESIM, Rebecq et al. CoRL 2018) running on the GPU.

    Events are generated for every pixel whenever the log intensity changes by more than the contrast
    threshold since the last event at that pixel. Intensities between two frames are linearly
    interpolated, so event timestamps are sub-frame accurate.
    """

    def __init__(self, contrast_threshold_neg=0.2, contrast_threshold_pos=0.2, refractory_period_ns=0):
        super().__init__()
        self.contrast_threshold_neg = contrast_threshold_neg
        self.contrast_threshold_pos = contrast_threshold_pos
        self.refractory_period_ns = int(refractory_period_ns)
        self.initial_reference_values = None
        self.timestamps_last_event = None
        self.last_image = None
        self.last_timestamp = None

    def reset(self):
        self.initial_reference_values = None
        self.timestamps_last_event = None
        self.last_image = None
        self.last_timestamp = None

    def forward(self, log_images, video_timestamps):
        """
        log_images: [T x H x W] float32 tensor of log intensities (on the GPU)
        video_timestamps: [T] int64 tensor of timestamps in nanoseconds
        returns: dict with keys x, y, t, p or None if no events were generated
        """
        if log_images.ndim != 3:
            assert log_images.ndim == 2
            log_images = log_images[None]
        if video_timestamps.ndim == 0:
            video_timestamps = video_timestamps[None]

        if self.initial_reference_values is None:
            self.initial_reference_values = log_images[0].clone()
            self.timestamps_last_event = torch.zeros_like(self.initial_reference_values).long()

        if self.last_image is not None:
            # prepend the last frame of the previous call so that events across call boundaries are not lost
            log_images = torch.cat([self.last_image[None], log_images], dim=0)
            video_timestamps = torch.cat([self.last_timestamp[None], video_timestamps], dim=0)

        if len(log_images) < 2:
            self.last_image = log_images[-1]
            self.last_timestamp = video_timestamps[-1]
            return None

        events = self.initialized_forward(log_images, video_timestamps)

        self.last_image = log_images[-1]
        self.last_timestamp = video_timestamps[-1]

        return events

    def initialized_forward(self, log_images, timestamps):
        T, H, W = log_images.shape

        # first pass: count the events generated at every pixel between consecutive frames
        event_counts = torch.zeros_like(log_images[0]).long()
        event_counts = esim_cuda.forward_count_events(log_images,
                                                      self.initial_reference_values.clone(),
                                                      event_counts,
                                                      self.contrast_threshold_neg,
                                                      self.contrast_threshold_pos)

        # compute the offsets for each event group
        cumsum = event_counts.view(-1).cumsum(dim=0)
        total_num_events = cumsum[-1]
        offsets = cumsum.view(H, W) - event_counts

        if total_num_events == 0:
            return None

        # second pass: compute events on the GPU, every thread writes its events at its own offset
        events = torch.zeros((total_num_events, 4), device=cumsum.device, dtype=cumsum.dtype)
        events = esim_cuda.forward(log_images,
                                   timestamps,
                                   self.initial_reference_values,
                                   offsets,
                                   events,
                                   self.timestamps_last_event,
                                   self.contrast_threshold_neg,
                                   self.contrast_threshold_pos,
                                   self.refractory_period_ns)

        # sort by timestamps. Do this for each batch of events
        events = events[events[:, 2].argsort()]
        # the refractory period may have suppressed some of the counted events (marked with t == 0)
        events = events[events[:, 2] > 0]

        return dict(zip(['x', 'y', 't', 'p'], events.T))


# backwards compatible name used by the scripts
ESIM = EventSimulator_torch
