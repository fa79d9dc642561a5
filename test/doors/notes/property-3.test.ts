import { malformedInputSuite, TOOL_NAMES } from './property.js';

malformedInputSuite(TOOL_NAMES.slice(8, 8 + 4));
