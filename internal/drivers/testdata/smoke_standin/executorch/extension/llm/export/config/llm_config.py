"""Stand-in for ExecuTorch 1.4.0's LlmConfig: the keys solve_model.py merges into it with
OmegaConf, as plain strings (the real one's model_class and dtype_override are enums), with
the real one's defaults (extension/llm/export/config/llm_config.py at v1.4.0)."""

from dataclasses import dataclass, field


@dataclass
class BaseConfig:
    model_class: str = "llama3"
    params: str = ""
    checkpoint: str = ""


@dataclass
class ModelConfig:
    use_kv_cache: bool = False
    use_sdpa_with_kv_cache: bool = False
    dtype_override: str = "fp32"


@dataclass
class ExportConfig:
    max_seq_length: int = 128
    max_context_length: int = 128


@dataclass
class DebugConfig:
    generate_full_logits: bool = False


@dataclass
class LlmConfig:
    base: BaseConfig = field(default_factory=BaseConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    export: ExportConfig = field(default_factory=ExportConfig)
    debug: DebugConfig = field(default_factory=DebugConfig)
