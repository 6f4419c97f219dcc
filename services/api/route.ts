import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** An async handler whose rejections reach the error handler. */
export function asyncRoute(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    fn(req, res).catch(next);
  };
}
