/**
 * The sandbox alone: `npm run sandbox` and `nest start sandbox`. The command itself (flags,
 * SANDBOX_* variables, Ctrl-C) lives in `cli.ts`, which the package ships as `malipo-sandbox`.
 */
import './cli';
