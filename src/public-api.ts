// Portico's public API for custom chat processor authors (spec 002): the package's main
// entry point (package.json `exports["."]`). See docs/plugins.md.
//
//   import { InvalidArgument, HttpError, RoutedEngineError } from 'portico';
//   import type { ChatProcessorProvider, ChatEngine, ModelCard, RoutedEngine, RequestContext } from 'portico';

export { InvalidArgument, HttpError, RoutedEngineError } from './processors/public-errors.js';
export type {
  ChatProcessorProvider,
  ChatEngineFactory,
  ChatEngine,
  FrontendConfig,
  ProcessorOptions,
  ModelCard,
  ModelTokenizer,
  RuntimeConfig,
  RoutedEngine,
  PreprocessedRequest,
  EngineOutput,
  RequestContext,
  ChatCompletionRequest,
  ChatCompletionChunk,
  ChatCompletionChunkDelta,
} from './processors/contract.js';
