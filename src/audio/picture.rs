//! The sound as Shadertoy shows it to a shader: a row of 512 texels of
//! spectrum (0 to 11,025 Hz, evenly spaced, each the magnitude there after
//! the automatic gain in decibels, -70 dB to 0 dB as 0 to 255) and a row
//! of 512 of waveform (the last 512 samples, 128 at silence), made at
//! every hop of the analysis; a texture input named `audio` shows it.

use std::fmt;

/// Texels in each row.
pub const TEXELS: usize = 512;
/// The spectrum row's highest frequency, Hz: Shadertoy's (a 2,048-sample
/// FFT at 44.1 kHz, the lower half of its bins).
const TOP_HZ: f32 = 11_025.0;
/// The quietest level the spectrum row shows above 0, dB.
const FLOOR_DB: f32 = -70.0;

/// One hop's spectrum and waveform, a byte a texel.
#[derive(Clone, Copy, PartialEq)]
pub struct SoundPicture {
    /// The spectrum, low to high.
    pub spectrum: [u8; TEXELS],
    /// The waveform, oldest sample first.
    pub wave: [u8; TEXELS],
}

impl Default for SoundPicture {
    /// Silence.
    fn default() -> Self {
        Self {
            spectrum: [0; TEXELS],
            wave: [128; TEXELS],
        }
    }
}

impl fmt::Debug for SoundPicture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loudest = self.spectrum.iter().max().copied().unwrap_or(0);
        write!(f, "SoundPicture {{ loudest texel: {loudest} }}")
    }
}

impl SoundPicture {
    /// The picture of `magnitudes` (an FFT's, `bin_hz` apart), scaled by
    /// `gain`, and of `recent`, the samples heard, oldest first.
    pub fn of(magnitudes: &[f32], bin_hz: f32, gain: f32, recent: &[f32]) -> Self {
        let spectrum = std::array::from_fn(|i| {
            let bin = (i as f32 + 0.5) * TOP_HZ / TEXELS as f32 / bin_hz.max(f32::MIN_POSITIVE);
            let below = (bin.floor() as usize).min(magnitudes.len().saturating_sub(1));
            let above = (below + 1).min(magnitudes.len().saturating_sub(1));
            let t = bin - bin.floor();
            let at = |k: usize| magnitudes.get(k).copied().unwrap_or(0.0);
            let magnitude = (at(below) * (1.0 - t) + at(above) * t) * gain;
            let decibels = 20.0 * magnitude.max(1e-9).log10();
            ((decibels - FLOOR_DB) / -FLOOR_DB * 255.0).clamp(0.0, 255.0) as u8
        });
        let silence = TEXELS.saturating_sub(recent.len());
        let heard = &recent[recent.len().saturating_sub(TEXELS)..];
        let wave = std::array::from_fn(|i| match i.checked_sub(silence) {
            Some(i) => ((heard[i].clamp(-1.0, 1.0) * 0.5 + 0.5) * 255.0).round() as u8,
            None => 128,
        });
        Self { spectrum, wave }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tone_lights_its_own_texel_and_its_wave_swings_round_128() {
        // 1 kHz, full scale, its FFT's bins 10 Hz apart.
        let mut magnitudes = vec![0.0; 2_000];
        magnitudes[100] = 1.0;
        let recent: Vec<f32> = (0..300).map(|i| (i as f32 * 0.1).sin()).collect();
        let picture = SoundPicture::of(&magnitudes, 10.0, 1.0, &recent);
        // Texel i covers (i + 0.5) * 21.5 Hz: 1 kHz is texel 46.
        let loudest = (0..TEXELS).max_by_key(|i| picture.spectrum[*i]);
        assert_eq!(loudest, Some(46));
        assert_eq!(picture.spectrum[300], 0, "silence elsewhere");
        assert_eq!(picture.wave[..212], [128; 212], "before the sound: silence");
        assert_eq!(picture.wave[212], 128, "the first sample, sin 0");
        assert!(
            picture.wave[212..].iter().any(|w| *w > 250) && picture.wave.iter().any(|w| *w < 5)
        );
    }
}
