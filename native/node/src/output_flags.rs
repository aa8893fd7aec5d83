//! The boolean output options of a Sequence / Detokenizer, passed from JS as one number
//! (bit values mirrored in src/native/core.ts `OutputFlag`): a per-request constructor
//! reads one integer instead of looking properties up in an options object.

#[derive(Clone, Copy)]
pub struct OutputFlags(pub u32);

impl OutputFlags {
    pub const SKIP_SPECIAL_TOKENS: u32 = 1;
    pub const SPACES_BETWEEN_SPECIAL_TOKENS: u32 = 2;
    pub const INCLUDE_STOP_STR_IN_OUTPUT: u32 = 4;
    pub const IGNORE_EOS: u32 = 8;

    fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }

    pub fn skip_special_tokens(self) -> bool {
        self.has(Self::SKIP_SPECIAL_TOKENS)
    }

    pub fn spaces_between_special_tokens(self) -> bool {
        self.has(Self::SPACES_BETWEEN_SPECIAL_TOKENS)
    }

    pub fn include_stop_str_in_output(self) -> bool {
        self.has(Self::INCLUDE_STOP_STR_IN_OUTPUT)
    }

    pub fn ignore_eos(self) -> bool {
        self.has(Self::IGNORE_EOS)
    }
}
