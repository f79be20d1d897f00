//! Pictures a thread of a source's own brings (an NDI receiver, a screen
//! capture): the newest one waiting for the frame, why there is none, the
//! buffers the frame gives back, and the flag that stops the thread when
//! the source is dropped. [`keep_running`] is that thread's life: its work
//! again after a failure or a panic, until the source is gone.
//! [`FedSource`] is a whole source made of such a thread whose trouble is
//! said as text (the screen capture, Spout in).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::camera::Cameras;
use super::media::MediaError;
use super::source::{Playing, TextureSource};
use super::still::DecodedImage;

/// Buffers given back and kept for the next pictures.
const SPARE_BUFFERS: usize = 2;

/// What the thread and the frame share; `T` says why there is no picture.
struct Slot<T> {
    newest: Option<DecodedImage>,
    trouble: Option<T>,
    spare: Vec<Vec<u8>>,
}

/// One source's feed, held by the source and by its thread.
pub struct Feed<T> {
    slot: Arc<Mutex<Slot<T>>>,
    stop: Arc<AtomicBool>,
}

impl<T> Clone for Feed<T> {
    fn clone(&self) -> Self {
        Self {
            slot: self.slot.clone(),
            stop: self.stop.clone(),
        }
    }
}

impl<T> Default for Feed<T> {
    fn default() -> Self {
        Self {
            slot: Arc::new(Mutex::new(Slot {
                newest: None,
                trouble: None,
                spare: Vec::new(),
            })),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl<T> Feed<T> {
    fn slot(&self) -> MutexGuard<'_, Slot<T>> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The thread's newest picture, for the frame; it clears the trouble.
    pub fn hand_over(&self, picture: DecodedImage) {
        let mut slot = self.slot();
        slot.newest = Some(picture);
        slot.trouble = None;
    }

    /// Why there is no picture, for the frame to say; a picture not yet
    /// taken is dropped.
    pub fn trouble(&self, why: T) {
        let mut slot = self.slot();
        slot.newest = None;
        slot.trouble = Some(why);
    }

    /// A buffer the frame gave back, or a new one.
    pub fn spare(&self) -> Vec<u8> {
        self.slot().spare.pop().unwrap_or_default()
    }

    /// The picture waiting, taken by the frame.
    pub fn newest(&self) -> Option<DecodedImage> {
        self.slot().newest.take()
    }

    /// Why there is no picture, if the thread said.
    pub fn current_trouble(&self) -> Option<T>
    where
        T: Clone,
    {
        self.slot().trouble.clone()
    }

    /// An uploaded picture's pixels, back for a later one.
    pub fn give_back(&self, rgba: Vec<u8>) {
        let mut slot = self.slot();
        if slot.spare.len() < SPARE_BUFFERS {
            slot.spare.push(rgba);
        }
    }

    /// Tells the thread to end (the source is dropped).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the thread is to end.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sleeps for `length`, waking early when told to stop.
    pub fn pause(&self, length: Duration) {
        pause(&self.stop, length);
    }
}

/// Sleeps for `length`, waking early once `stop` is set.
pub fn pause(stop: &AtomicBool, length: Duration) {
    let until = Instant::now() + length;
    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `work` until it returns `Ok` or `stop` is set; after it fails
/// (`Some` of why) or panics (`None`), `failed` hears of it and `work`
/// runs again `retry` later.
pub fn keep_running<T>(
    stop: &AtomicBool,
    retry: Duration,
    mut work: impl FnMut() -> Result<(), T>,
    mut failed: impl FnMut(Option<T>),
) {
    while !stop.load(Ordering::Relaxed) {
        match catch_unwind(AssertUnwindSafe(&mut work)) {
            Ok(Ok(())) => return,
            Ok(Err(why)) => failed(Some(why)),
            Err(_) => failed(None),
        }
        pause(stop, retry);
    }
}

/// Starts `work` on a thread named `name` with `keep_running`, `failed`
/// saying each failure as the feed's trouble; a thread that cannot start
/// is the feed's trouble at once (`no_thread`).
pub fn spawn<T: Send + 'static>(
    feed: &Feed<T>,
    name: String,
    retry: Duration,
    mut work: impl FnMut(&Feed<T>) -> Result<(), T> + Send + 'static,
    failed: impl Fn(Option<T>) -> T + Send + 'static,
    no_thread: impl FnOnce(std::io::Error) -> T,
) {
    let worker = feed.clone();
    let started = std::thread::Builder::new().name(name).spawn(move || {
        let stop = worker.stop.clone();
        keep_running(
            &stop,
            retry,
            || work(&worker),
            |why| worker.trouble(failed(why)),
        );
    });
    if let Err(error) = started {
        feed.trouble(no_thread(error));
    }
}

/// A source whose pictures a thread of its own brings, black with its
/// trouble on screen while it has none.
pub struct FedSource {
    feed: Feed<String>,
    /// The shelf's error for its trouble.
    error: fn(String) -> MediaError,
}

impl FedSource {
    /// Runs `work` on a thread named `thread`, again `retry` after each
    /// failure; `named` (the source's name) says its troubles, which
    /// `error` makes the shelf's.
    pub fn start(
        named: &str,
        thread: &str,
        retry: Duration,
        work: impl FnMut(&Feed<String>) -> Result<(), String> + Send + 'static,
        error: fn(String) -> MediaError,
    ) -> Self {
        let feed = Feed::default();
        let name = named.to_string();
        let failed = move |why: Option<String>| {
            let why = why.unwrap_or_else(|| "its thread failed and starts again".into());
            tracing::warn!("{name}: {why}");
            format!("{name}: {why}; looking again every {} s", retry.as_secs())
        };
        let no_thread = |error| format!("no thread for it: {error}");
        spawn(&feed, thread.into(), retry, work, failed, no_thread);
        Self { feed, error }
    }
}

impl Drop for FedSource {
    fn drop(&mut self) {
        self.feed.stop();
    }
}

impl TextureSource for FedSource {
    fn advance(
        &mut self,
        _playing: Playing,
        _cameras: &dyn Cameras,
    ) -> Result<Option<DecodedImage>, MediaError> {
        if let Some(picture) = self.feed.newest() {
            return Ok(Some(picture));
        }
        (self.feed.current_trouble()).map_or(Ok(None), |why| Err((self.error)(why)))
    }

    fn give_back(&mut self, rgba: Vec<u8>) {
        self.feed.give_back(rgba);
    }

    fn black_when_lost(&self) -> bool {
        true
    }
}
