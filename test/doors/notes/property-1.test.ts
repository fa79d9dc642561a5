import { malformedInputSuite, TOOL_NAMES } from './property.js';

malformedInputSuite(TOOL_NAMES.slice(0, 0 + 4));
