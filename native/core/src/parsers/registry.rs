//! The parser name tables: one line per parser, aliases included. Unknown names are an
//! error that lists the valid names (never a silent fallback).

use super::reasoning::{families as rf, Spec};
use super::tool::{
    deepseek, dsml, gemma4, glm, json_family as jf, kimi, minimax, pythonic, step3, xml_function as xf, Format,
};
use super::ParserError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFormatId {
    Hermes,
    NemotronDeci,
    Llama3Json,
    Mistral,
    Phi4,
    Jamba,
    DeepSeek,
    DsmlV32,
    DsmlV4,
    Qwen3Coder,
    MiniMaxM2,
    MiniMaxM3,
    Glm,
    Kimi,
    Harmony,
    Pythonic,
    Llama4Pythonic,
    Gemma4,
    Default,
    Xlam,
    Granite,
    Internlm,
    HunyuanA13b,
    SeedOss,
    Step3,
    Cohere,
}

pub struct ToolEntry {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub id: ToolFormatId,
}

pub struct ReasoningEntry {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub spec: Spec,
}

use ToolFormatId as T;

pub static TOOL_PARSERS: &[ToolEntry] = &[
    ToolEntry { name: "hermes", aliases: &["qwen25"], id: T::Hermes },
    ToolEntry { name: "nemotron_deci", aliases: &[], id: T::NemotronDeci },
    ToolEntry { name: "llama3_json", aliases: &[], id: T::Llama3Json },
    ToolEntry { name: "mistral", aliases: &[], id: T::Mistral },
    ToolEntry { name: "phi4", aliases: &[], id: T::Phi4 },
    ToolEntry { name: "jamba", aliases: &[], id: T::Jamba },
    ToolEntry { name: "deepseek_v3", aliases: &[], id: T::DeepSeek },
    ToolEntry { name: "deepseek_v3_1", aliases: &[], id: T::DeepSeek },
    ToolEntry { name: "deepseek_v3_2", aliases: &[], id: T::DsmlV32 },
    ToolEntry { name: "deepseek_v4", aliases: &["deepseek-v4", "deepseekv4"], id: T::DsmlV4 },
    ToolEntry { name: "qwen3_coder", aliases: &[], id: T::Qwen3Coder },
    ToolEntry { name: "nemotron_nano", aliases: &[], id: T::Qwen3Coder },
    ToolEntry { name: "minimax_m2", aliases: &[], id: T::MiniMaxM2 },
    ToolEntry { name: "minimax_m3", aliases: &[], id: T::MiniMaxM3 },
    ToolEntry { name: "glm47", aliases: &[], id: T::Glm },
    ToolEntry { name: "glm45", aliases: &[], id: T::Glm },
    ToolEntry { name: "kimi_k2", aliases: &[], id: T::Kimi },
    ToolEntry { name: "harmony", aliases: &[], id: T::Harmony },
    ToolEntry { name: "pythonic", aliases: &[], id: T::Pythonic },
    ToolEntry { name: "llama4_pythonic", aliases: &[], id: T::Llama4Pythonic },
    ToolEntry { name: "gemma4", aliases: &["gemma-4"], id: T::Gemma4 },
    ToolEntry { name: "default", aliases: &[], id: T::Default },
    ToolEntry { name: "xlam", aliases: &[], id: T::Xlam },
    ToolEntry { name: "granite", aliases: &[], id: T::Granite },
    ToolEntry { name: "internlm", aliases: &[], id: T::Internlm },
    ToolEntry { name: "hunyuan_a13b", aliases: &[], id: T::HunyuanA13b },
    ToolEntry { name: "seed_oss", aliases: &[], id: T::SeedOss },
    ToolEntry { name: "step3", aliases: &[], id: T::Step3 },
    ToolEntry { name: "cohere_command", aliases: &["cohere"], id: T::Cohere },
];

pub static REASONING_PARSERS: &[ReasoningEntry] = &[
    ReasoningEntry { name: "basic", aliases: &[], spec: Spec::Markers(&rf::THINK_OPTIONAL) },
    // `qwen` is the name spec 003's truth table uses
    ReasoningEntry { name: "qwen3", aliases: &["qwen"], spec: Spec::Markers(&rf::QWEN3) },
    ReasoningEntry { name: "deepseek_r1", aliases: &[], spec: Spec::Markers(&rf::THINK_FORCED) },
    ReasoningEntry { name: "deepseek_v3", aliases: &[], spec: Spec::Markers(&rf::THINK_FORCED_SHAPE) },
    ReasoningEntry { name: "deepseek_v3_1", aliases: &[], spec: Spec::Markers(&rf::THINK_FORCED_SHAPE) },
    ReasoningEntry { name: "deepseek_v3_2", aliases: &[], spec: Spec::Markers(&rf::THINK_FORCED) },
    ReasoningEntry { name: "deepseek_v4", aliases: &[], spec: Spec::Markers(&rf::DEEPSEEK_V4) },
    ReasoningEntry { name: "nemotron_deci", aliases: &[], spec: Spec::Markers(&rf::THINK_OPTIONAL) },
    ReasoningEntry { name: "nemotron_nano", aliases: &[], spec: Spec::Markers(&rf::NEMOTRON) },
    ReasoningEntry { name: "nemotron3", aliases: &[], spec: Spec::Markers(&rf::NEMOTRON) },
    ReasoningEntry { name: "nemotron_v3", aliases: &[], spec: Spec::Markers(&rf::NEMOTRON) },
    ReasoningEntry { name: "glm45", aliases: &[], spec: Spec::Markers(&rf::THINK_OPTIONAL) },
    ReasoningEntry { name: "step3", aliases: &[], spec: Spec::Markers(&rf::STEP3) },
    ReasoningEntry { name: "kimi", aliases: &[], spec: Spec::Markers(&rf::KIMI) },
    ReasoningEntry { name: "kimi_k25", aliases: &[], spec: Spec::Markers(&rf::KIMI_K25) },
    ReasoningEntry { name: "mistral", aliases: &[], spec: Spec::Markers(&rf::MISTRAL) },
    ReasoningEntry { name: "granite", aliases: &[], spec: Spec::Markers(&rf::GRANITE) },
    ReasoningEntry { name: "gpt_oss", aliases: &[], spec: Spec::Harmony },
    ReasoningEntry { name: "gemma4", aliases: &[], spec: Spec::Markers(&rf::GEMMA4) },
    ReasoningEntry { name: "minimax_append_think", aliases: &[], spec: Spec::Markers(&rf::MINIMAX_APPEND_THINK) },
    ReasoningEntry { name: "minimax_m2", aliases: &[], spec: Spec::Markers(&rf::MINIMAX_M2) },
    ReasoningEntry { name: "minimax_m3", aliases: &[], spec: Spec::Markers(&rf::MINIMAX_M3) },
    ReasoningEntry { name: "cohere_command", aliases: &["cohere"], spec: Spec::Markers(&rf::COHERE) },
];

/// Every accepted tool parser name (canonical names and aliases).
pub fn tool_parser_names() -> Vec<&'static str> {
    TOOL_PARSERS.iter().flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied())).collect()
}

/// Every accepted reasoning parser name (canonical names and aliases).
pub fn reasoning_parser_names() -> Vec<&'static str> {
    REASONING_PARSERS.iter().flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied())).collect()
}

pub fn tool_entry(name: &str) -> Result<&'static ToolEntry, ParserError> {
    TOOL_PARSERS.iter().find(|e| e.name == name || e.aliases.contains(&name)).ok_or_else(|| {
        ParserError::UnknownToolParser { name: name.to_string(), valid: tool_parser_names() }
    })
}

pub fn reasoning_entry(name: &str) -> Result<&'static ReasoningEntry, ParserError> {
    REASONING_PARSERS.iter().find(|e| e.name == name || e.aliases.contains(&name)).ok_or_else(|| {
        ParserError::UnknownReasoningParser { name: name.to_string(), valid: reasoning_parser_names() }
    })
}

pub fn tool_format(name: &str) -> Result<ToolFormatId, ParserError> {
    Ok(tool_entry(name)?.id)
}

pub fn reasoning_spec(name: &str) -> Result<Spec, ParserError> {
    Ok(reasoning_entry(name)?.spec)
}

pub fn make_format(id: ToolFormatId) -> Box<dyn Format> {
    match id {
        T::Hermes => Box::new(jf::HERMES),
        T::NemotronDeci => Box::new(jf::NEMOTRON_DECI),
        T::Llama3Json => Box::new(jf::LLAMA3_JSON),
        T::Mistral => Box::new(jf::Mistral),
        T::Phi4 => Box::new(jf::PHI4),
        T::Jamba | T::HunyuanA13b => Box::new(jf::JAMBA),
        T::DeepSeek => Box::new(deepseek::DeepSeek),
        T::DsmlV32 => Box::new(dsml::V32),
        T::DsmlV4 => Box::new(dsml::V4),
        T::Qwen3Coder => Box::new(xf::QWEN3_CODER),
        T::SeedOss => Box::new(xf::SEED_OSS),
        T::MiniMaxM2 => Box::new(minimax::MiniMaxM2),
        T::MiniMaxM3 => Box::new(minimax::MiniMaxM3),
        T::Glm => Box::new(glm::Glm),
        T::Kimi => Box::new(kimi::Kimi),
        // harmony runs its own engine; as a plain format it would see no markers
        T::Harmony => Box::new(jf::JsonFamily { starts: &[], ends: &[], ..jf::HERMES }),
        T::Pythonic => Box::new(pythonic::Pythonic { llama4: false }),
        T::Llama4Pythonic => Box::new(pythonic::Pythonic { llama4: true }),
        T::Gemma4 => Box::new(gemma4::Gemma4),
        T::Default => Box::new(jf::DEFAULT),
        T::Xlam => Box::new(jf::XLAM),
        T::Granite => Box::new(jf::GRANITE),
        T::Internlm => Box::new(jf::INTERNLM),
        T::Step3 => Box::new(step3::Step3),
        T::Cohere => Box::new(jf::COHERE),
    }
}
