// One turn of chop's chat graph streamed by the JS LangGraph SDK, as Agent Chat UI streams it:
//   node stream_chat.mjs URL COLLECTION QUESTION MODE[,MODE...]
// prints {"thread_id": ..., "events": [{"event": ..., "data": ...}, ...]} as JSON.
import { Client } from "@langchain/langgraph-sdk";

const [apiUrl, collection, question, modes] = process.argv.slice(2);
const client = new Client({ apiUrl });
const thread = await client.threads.create();
const events = [];
for await (const part of client.runs.stream(thread.thread_id, "chat", {
  input: { messages: [{ type: "human", content: question }] },
  context: { collection },
  streamMode: modes.split(","),
})) {
  events.push({ event: part.event, data: part.data });
}
process.stdout.write(JSON.stringify({ thread_id: thread.thread_id, events }));
