//! Network streams (`--send srt://…`, UDP, RTMP, RTSP, TCP): the picture
//! encoded by ffmpeg, fed raw frames through its pipe, to the URL given.

use super::kinds::{SenderKind, Target};
use super::tap::{Frame, Sink, SinkError};
use crate::outputs::video::VideoWriter;

/// A stream URL, sent through ffmpeg.
pub const SENDER: SenderKind = SenderKind {
    form: "a stream URL (srt://, udp://, rtmp://, rtmps://, rtsp://, tcp://)",
    schemes: &[
        "srt://", "udp://", "rtmp://", "rtmps://", "rtsp://", "tcp://",
    ],
    check: |_| Ok(()),
    missing: None,
    open: open_sink,
};

fn open_sink(target: &Target, size: [u32; 2], fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    let url = target.label();
    VideoWriter::stream(url, size, fps)
        .map(|w| Box::new(Stream(Some(w))) as Box<dyn Sink>)
        .map_err(|error| SinkError::StreamStart {
            url: url.to_string(),
            error,
        })
}

/// A live stream: frames into ffmpeg's pipe.
struct Stream(Option<VideoWriter>);

impl Sink for Stream {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        match self.0.as_mut() {
            Some(writer) => writer.frame(&frame.rgba).map_err(SinkError::Stream),
            None => Err(SinkError::StreamEnded),
        }
    }

    fn finish(&mut self) -> Result<Option<String>, SinkError> {
        if let Some(writer) = self.0.take() {
            writer.finish().ok();
        }
        Ok(None)
    }
}
