//! Texture inputs: what a layer may bind, by name, each frame. The engine
//! names what it has: `below` (the composite of the layers beneath it),
//! `previous` (the layer's own last frame, for feedback) and `layer:ID`
//! (another layer's own output: this frame's for a layer beneath, the
//! last frame's for one above). Media files, clips and cameras join them
//! as sources of their own (nannou's ISF pipeline, ruffle's bitmap
//! handles): a layer asks by name and never learns where a texture came
//! from.

/// Where the other layers' outputs are found by id (the compositor's
/// targets), looked up only when a layer asks.
pub trait LayerOutputs {
    /// Layer `id`'s latest output, if it is on stage.
    fn output(&self, id: &str) -> Option<&wgpu::TextureView>;
}

/// The textures a layer may bind this frame.
pub struct TextureInputs<'a> {
    below: &'a wgpu::TextureView,
    previous: &'a wgpu::TextureView,
    /// The layer asking: its own output is `previous`, not `layer:` itself.
    own: &'a str,
    layers: &'a dyn LayerOutputs,
}

impl<'a> TextureInputs<'a> {
    /// The engine's own inputs for layer `own`: `below`, `previous`, and
    /// every other layer's output by id.
    pub fn new(
        below: &'a wgpu::TextureView,
        previous: &'a wgpu::TextureView,
        (own, layers): (&'a str, &'a dyn LayerOutputs),
    ) -> Self {
        Self {
            below,
            previous,
            own,
            layers,
        }
    }

    /// The input called `name` (`below`, `previous`, `layer:ID`), if there
    /// is one.
    pub fn get(&self, name: &str) -> Option<&'a wgpu::TextureView> {
        match name {
            "below" => Some(self.below),
            "previous" => Some(self.previous),
            _ => {
                let id = name.strip_prefix("layer:").filter(|id| *id != self.own)?;
                self.layers.output(id)
            }
        }
    }

    /// The composite of the layers beneath.
    pub fn below(&self) -> &'a wgpu::TextureView {
        self.below
    }

    /// The layer's own last frame.
    pub fn previous(&self) -> &'a wgpu::TextureView {
        self.previous
    }
}
