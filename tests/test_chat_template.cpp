// Chat templates (tern_chat_apply_template and friends) against llama.cpp's own
// test vectors: the conversation and the expected outputs of llama.cpp's
// tests/test-chat-template.cpp (commit c392e509), byte for byte, for every built-in
// template by name and by the Jinja source it is detected from; the few built-ins
// that test has no case for use outputs of llama.cpp's llm_chat_apply_template at
// the same commit. Also: bounded writes, errors, zero messages, the model's template.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "tern.h"
#include "chat/chat_template.h"
#include "core/arena.h"
#include "gguf/writer.h"
#include "model/model.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

// The conversation of llama.cpp's test.
static const tern_chat_message k_conv[] = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};
static const size_t k_conv_n = sizeof(k_conv) / sizeof(k_conv[0]);

struct jinja_case {
    const char * model;     // llama.cpp's name of the case
    const char * builtin;   // the built-in the template is detected as
    const char * tmpl;      // tokenizer.chat_template
    const char * expected;  // llama_chat_apply_template output (add_generation_prompt = true)
};

// From llama.cpp tests/test-chat-template.cpp (name, template_str, expected_output).
static const jinja_case k_cases[] = {
    {"teknium/OpenHermes-2.5-Mistral-7B", "chatml",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
     "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
    {"mistralai/Mistral-7B-Instruct-v0.2 (NOTE: Old pre-v1 without a system prompt)", "llama2",
     "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}",
     "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
    {"TheBloke/FusionNet_34Bx2_MoE-AWQ", "llama2-sys-bos",
     "{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token -}}\n{% endif %}\n{% endfor %}",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
    {"bofenghuang/vigogne-2-70b-chat", "llama2-sys-strip",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif true == true and not '<<SYS>>' in messages[0]['content'] %}{% set loop_messages = messages %}{% set system_message = 'Vous êtes Vigogne, un assistant IA créé par Zaion Lab. Vous suivez extrêmement bien les instructions. Aidez autant que vous le pouvez.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]"},
    {"mlabonne/AlphaMonarch-7B", "monarch",
     "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}",
     "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n"},
    {"google/gemma-7b-it", "gemma",
     "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}",
     "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n"},
    {"OrionStarAI/Orion-14B-Chat", "orion",
     "{% for message in messages %}{% if loop.first %}{{ bos_token }}{% endif %}{% if message['role'] == 'user' %}{{ 'Human: ' + message['content'] + '\\n\\nAssistant: ' + eos_token }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
     "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>"},
    {"openchat/openchat-3.5-0106", "openchat",
     "{{ bos_token }}{% for message in messages %}{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}{% endfor %}{% if add_generation_prompt %}{{ 'GPT4 Correct Assistant:' }}{% endif %}",
     "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:"},
    {"deepseek-ai/deepseek-coder-33b-instruct", "deepseek",
     "{% if not add_generation_prompt is defined %}\n{% set add_generation_prompt = false %}\n{% endif %}\n{%- set ns = namespace(found=false) -%}\n{%- for message in messages -%}\n    {%- if message['role'] == 'system' -%}\n        {%- set ns.found = true -%}\n    {%- endif -%}\n{%- endfor -%}\n{{bos_token}}{%- if not ns.found -%}\n{{'You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, and other non-computer science questions, you will refuse to answer\\n'}}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n{{ message['content'] }}\n    {%- else %}\n        {%- if message['role'] == 'user' %}\n{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{% if add_generation_prompt %}\n{{'### Response:'}}\n{% endif %}",
     "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n"},
    {"eachadea/vicuna-13b-1.1", "vicuna",
     "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{- '' + message['content'] + '\n\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
     "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"Orca-Vicuna", "vicuna-orca",
     "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{-'SYSTEM: ' + message['content'] + '\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
     "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"CohereForAI/c4ai-command-r-plus", "command-r",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% elif false == true %}{% set loop_messages = messages %}{% set system_message = 'You are Command-R, a brilliant, sophisticated, AI-assistant trained to assist human users by providing thorough responses. You are trained by Cohere.' %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% if system_message != false %}{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + system_message + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% set content = message['content'] %}{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% elif message['role'] == 'assistant' %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'  + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %}",
     "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {"Llama-3", "llama3",
     "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}",
     "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"Phi-3-mini", "phi3",
     "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"Phi-3-small", "phi3",
     "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"Phi-3-medium", "phi3",
     "{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"Phi-3-vision", "phi3",
     "{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt and messages[-1]['role'] != 'assistant' %}{{- '<|assistant|>\n' -}}{% endif %}",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"ChatGLM3", "chatglm3",
     "{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
     "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>"},
    {"ChatGLM4", "chatglm4",
     "[gMASK]<sop>{% for item in messages %}{% if item['tools'] is defined %}<|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具{% set tools = item['tools'] %}{% for tool in tools %}{% if tool['type'] == 'function' %}\n\n## {{ tool['function']['name'] }}\n\n{{ tool['function'] | tojson(indent=4) }}\n......{% endif %}{% endfor %}{% endif %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
     "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
    {"GLMEdge", "glmedge",
     "{% for item in messages %}{% if item['role'] == 'system' %}<|system|>\n{{ item['content'] }}{% elif item['role'] == 'user' %}<|user|>\n{{ item['content'] }}{% elif item['role'] == 'assistant' %}<|assistant|>\n{{ item['content'] }}{% endif %}{% endfor %}<|assistant|>",
     "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
    {"MiniCPM-3B-OpenHermes-2.5-v2-GGUF", "minicpm",
     "{% for message in messages %}{% if message['role'] == 'user' %}{{'<用户>' + message['content'].strip() + '<AI>'}}{% else %}{{message['content'].strip()}}{% endif %}{% endfor %}",
     "You are a helpful assistant<用户>Hello<AI>Hi there<用户>Who are you<AI>I am an assistant<用户>Another question<AI>"},
    {"DeepSeek-V2", "deepseek2",
     "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}",
     "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<｜end▁of▁sentence｜>User: Who are you\n\nAssistant:    I am an assistant   <｜end▁of▁sentence｜>User: Another question\n\nAssistant:"},
    {"ibm-granite/granite-3.0-8b-instruct", "granite",
     "{%- if tools %}\n    {{- '<|start_of_role|>available_tools<|end_of_role|>\n' }}\n    {%- for tool in tools %}\n    {{- tool | tojson(indent=4) }}\n    {%- if not loop.last %}\n        {{- '\n\n' }}\n    {%- endif %}\n    {%- endfor %}\n    {{- '<|end_of_text|>\n' }}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n    {{- '<|start_of_role|>system<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'user' %}\n    {{- '<|start_of_role|>user<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>'  + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'assistant_tool_call' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- elif message['role'] == 'tool_response' %}\n    {{- '<|start_of_role|>tool_response<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}\n    {%- endif %}\n    {%- if loop.last and add_generation_prompt %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>' }}\n    {%- endif %}\n{%- endfor %}",
     "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>\n"},
    {"mistralai/Mistral-7B-Instruct-v0.2 (mistralai 'v1' template with a system prompt)", "mistral-v1",
     "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n    {%- endif %}\n    {%- if message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- else %}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n    {%- endif %}\n{%- endfor %}\n",
     " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"},
    {"Mistral-Large-Instruct-2407 (mistralai 'v3' template; modified to have system prompt at start)", "mistral-v3",
     "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS] [\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif message.tool_calls is defined and message.tool_calls is not none %}\n        {{- \"[TOOL_CALLS] [\" }}\n        {%- for tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n            {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS] {\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
     "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] Another question[/INST]"},
    {"Mistral-Nemo-Instruct-2407 (mistralai 'v3-tekken' template; modified to have system prompt at start)", "mistral-v3-tekken",
     "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n\n{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}\n{%- set ns = namespace() %}\n{%- set ns.index = 0 %}\n{%- for message in loop_messages %}\n    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.tool_calls is defined and message.tool_calls is not none)) %}\n        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n            {{- raise_exception(\"After the optional system message, conversation roles must alternate user/assistant/user/assistant/...\") }}\n        {%- endif %}\n        {%- set ns.index = ns.index + 1 %}\n    {%- endif %}\n{%- endfor %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS][\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n            {%- endif %}\n        {%- if loop.last and system_message is defined %}\n            {{- \"[INST]\" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif (message.tool_calls is defined and message.tool_calls is not none) %}\n        {{- \"[TOOL_CALLS][\" }}\n        {%- for tool_call in message.tool_calls %}\n            {%- set out = tool_call.function|tojson %}\n            {{- out[:-1] }}\n            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n            {%- endif %}\n            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n            {%- if not loop.last %}\n                {{- \", \" }}\n            {%- else %}\n                {{- \"]\" + eos_token }}\n            {%- endif %}\n        {%- endfor %}\n    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- message[\"content\"] + eos_token}}\n    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n        {%- if message.content is defined and message.content.content is defined %}\n            {%- set content = message.content.content %}\n        {%- else %}\n            {%- set content = message.content %}\n        {%- endif %}\n        {{- '[TOOL_RESULTS]{\"content\": ' + content|string + \", \" }}\n        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length 9!\") }}\n        {%- endif %}\n        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
     "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
    {"mistralai/Mistral-Large-Instruct-2411 (mistralai 'v7' template)", "mistral-v7",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% else %}{{ raise_exception('Only user, system and assistant roles are supported!') }}{% endif %}{% endfor %}",
     "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]"},
    {"ai-sage/GigaChat-20B-A3B-instruct", "gigachat",
     "{% if messages[0]['role'] == 'system' -%}\n    {%- set loop_messages = messages[1:] -%}\n    {%- set system_message = bos_token + messages[0]['content'] + additional_special_tokens[1] -%}\n{%- else -%}\n    {%- set loop_messages = messages -%}\n    {%- set system_message = bos_token + '' -%}\n{%- endif -%}\n{%- for message in loop_messages %}\n    {% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}\n    {% endif %}\n    \n    {%- if loop.index0 == 0 -%}\n        {{ system_message -}}\n    {%- endif -%}\n    {%- if message['role'] == 'user' -%}\n        {{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}\n        {{ 'available functions' + additional_special_tokens[0] + additional_special_tokens[2] + additional_special_tokens[3]  + additional_special_tokens[1] -}}\n    {%- endif -%}\n    {%- if message['role'] == 'assistant' -%}\n        {{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}\n    {%- endif -%}\n    {%- if loop.last and add_generation_prompt -%}\n        {{ 'assistant' + additional_special_tokens[0] -}}\n    {%- endif -%}\n{%- endfor %}",
     "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>"},
    {"Infinigence/Megrez-3B-Instruct", "megrez",
     "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|role_start|>system<|role_end|>你是Megrez-3B-Instruct，将针对用户的问题给出详细的、积极的回答。<|turn_end|>' }}{% endif %}{{ '<|role_start|>' + message['role'] + '<|role_end|>' + message['content'] + '<|turn_end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|role_start|>assistant<|role_end|>' }}{% endif %}",
     "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|><|role_start|>assistant<|role_end|>"},
    {"phi-4", "phi4",
     "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}",
     "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>"},
};

// Built-ins without a case above: llm_chat_apply_template's output for k_conv
// (add_ass = true) at llama.cpp c392e509, and marker snippets (Tern's own) that
// llm_chat_detect_template maps to them.
struct builtin_case {
    const char * builtin;
    const char * snippet;
    const char * expected;
};
static const builtin_case k_builtin_only[] = {
    {"llama2-sys", "{{ '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' }}",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
    {"zephyr", "{{ '<|user|>\\n' + message['content'] + '<|endoftext|>' }}",
     "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n"},
    {"falcon3", "{{ '<|user|>\\n' + content }}{{ '<|assistant|>\\n' + content + '</s>' }}",
     "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi there\n<|user|>\nWho are you\n<|assistant|>\n   I am an assistant   \n<|user|>\nAnother question\n<|assistant|>\n"},
    {"deepseek3", "{{'<\xef\xbd\x9cUser\xef\xbd\x9c>' + c}}{{'<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>' + c + '<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>'}}",
     "You are a helpful assistant\n\n<\xef\xbd\x9cUser\xef\xbd\x9c>Hello<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>Hi there<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
     "<\xef\xbd\x9cUser\xef\xbd\x9c>Who are you<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>   I am an assistant   <\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
     "<\xef\xbd\x9cUser\xef\xbd\x9c>Another question<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"},
    {"exaone3", "{{ '[|system|]' + s + '[|endofturn|]' }}{{ '[|assistant|]' + a + '[|endofturn|]' }}",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"rwkv-world", "{# rwkv-world #}{{ 'User: ' + content + '\\n\\nAssistant:' }}",
     "You are a helpful assistant\n\nUser: Hello\n\nAssistant:Hi there\n\nUser: Who are you\n\nAssistant:   I am an assistant   \n\nUser: Another question\n\nAssistant:"},
};

static std::string apply(const char * tmpl, const tern_chat_message * msgs, size_t n, bool add_ass,
                         int32_t * out_res = NULL) {
    std::vector<char> buf(16);
    int32_t r = tern_chat_apply_template(tmpl, msgs, n, add_ass, buf.data(), (int32_t) buf.size());
    if (r >= (int32_t) buf.size()) {
        buf.resize((size_t) r + 1);
        r = tern_chat_apply_template(tmpl, msgs, n, add_ass, buf.data(), (int32_t) buf.size());
    }
    if (out_res) *out_res = r;
    return r < 0 ? std::string("<error>") : std::string(buf.data(), (size_t) r);
}

static std::string apply(const char * tmpl, const std::vector<tern_chat_message> & msgs, bool add_ass) {
    return apply(tmpl, msgs.data(), msgs.size(), add_ass);
}

static std::string name_of(const char * tmpl) {
    const char * n = chat_tmpl_name(chat_tmpl_detect(tmpl, strlen(tmpl)));
    return n ? n : "(unknown)";
}

static void test_jinja_cases(void) {
    for (const jinja_case & c : k_cases) {
        std::string got = apply(c.tmpl, k_conv, k_conv_n, true);
        CHECK_MSG(got == c.expected, "%s:\n  expected: %s\n  got:      %s", c.model, c.expected, got.c_str());
        CHECK_MSG(name_of(c.tmpl) == c.builtin, "%s: detected as %s, expected %s", c.model, name_of(c.tmpl).c_str(),
                  c.builtin);
        // The same output by the built-in's name.
        std::string by_name = apply(c.builtin, k_conv, k_conv_n, true);
        CHECK_MSG(by_name == c.expected, "%s by name %s: got %s", c.model, c.builtin, by_name.c_str());
    }
    for (const builtin_case & c : k_builtin_only) {
        std::string by_name = apply(c.builtin, k_conv, k_conv_n, true);
        CHECK_MSG(by_name == c.expected, "%s:\n  expected: %s\n  got:      %s", c.builtin, c.expected, by_name.c_str());
        CHECK_MSG(name_of(c.snippet) == c.builtin, "snippet of %s detected as %s", c.builtin, name_of(c.snippet).c_str());
        CHECK(apply(c.snippet, k_conv, k_conv_n, true) == c.expected);
    }
}

static void test_builtin_list(void) {
    int32_t n = tern_chat_builtin_templates(NULL, 0);
    CHECK(n == 33);
    std::vector<const char *> names((size_t) n + 2, (const char *) NULL);
    CHECK(tern_chat_builtin_templates(names.data(), names.size()) == n);
    CHECK(names[(size_t) n] == NULL);  // nothing written past the count
    const char * two[2] = {NULL, NULL};
    CHECK(tern_chat_builtin_templates(two, 1) == n && two[0] == names[0] && two[1] == NULL);
    static const char * const expected[] = {
        "chatglm3", "chatglm4", "chatml", "command-r", "deepseek", "deepseek2", "deepseek3", "exaone3",
        "falcon3", "gemma", "gigachat", "glmedge", "granite", "llama2", "llama2-sys", "llama2-sys-bos",
        "llama2-sys-strip", "llama3", "megrez", "minicpm", "mistral-v1", "mistral-v3", "mistral-v3-tekken",
        "mistral-v7", "monarch", "openchat", "orion", "phi3", "phi4", "rwkv-world", "vicuna", "vicuna-orca",
        "zephyr",
    };
    CHECK(sizeof(expected) / sizeof(expected[0]) == (size_t) n);
    for (int32_t i = 0; i < n && i < 33; i++) {
        CHECK_MSG(names[(size_t) i] && strcmp(names[(size_t) i], expected[i]) == 0, "name %d: %s", i,
                  names[(size_t) i] ? names[(size_t) i] : "(null)");
        if (i > 0) CHECK(strcmp(names[(size_t) i - 1], names[(size_t) i]) < 0);  // llama.cpp's (std::map) order
        // Every built-in is covered by a vector above.
        bool covered = false;
        for (const jinja_case & c : k_cases) covered |= strcmp(c.builtin, expected[i]) == 0;
        for (const builtin_case & c : k_builtin_only) covered |= strcmp(c.builtin, expected[i]) == 0;
        CHECK_MSG(covered, "%s has no test vector", expected[i]);
        int32_t r = tern_chat_apply_template(expected[i], k_conv, k_conv_n, 1, NULL, 0);
        CHECK_MSG(r > 0, "%s: %d", expected[i], r);
    }
}

// llama.cpp's common_chat_format_single over tern_chat_apply_template: the text a new
// message adds to a formatted history.
static std::string format_single(const char * tmpl, const std::vector<tern_chat_message> & past,
                                 tern_chat_message msg, bool add_ass) {
    std::string fmt_past = past.empty() ? std::string() : apply(tmpl, past, false);
    std::string out;
    if (add_ass && !fmt_past.empty() && fmt_past.back() == '\n') out += "\n";
    std::vector<tern_chat_message> all = past;
    all.push_back(msg);
    std::string fmt_all = apply(tmpl, all, add_ass);
    return out + fmt_all.substr(fmt_past.size());
}

// The format_single assertions of llama.cpp's test (system message, then a user message).
static void test_format_single(void) {
    std::vector<tern_chat_message> past;
    tern_chat_message sys = {"system", "You are a helpful assistant"};
    CHECK(format_single("chatml", past, sys, false) == "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n");
    CHECK(format_single("mistral-v1", past, sys, false) == " [INST] You are a helpful assistant\n\n");
    CHECK(format_single("mistral-v3", past, sys, false) == "[INST] You are a helpful assistant\n\n");
    CHECK(format_single("mistral-v3-tekken", past, sys, false) == "[INST]You are a helpful assistant\n\n");
    CHECK(format_single("mistral-v7", past, sys, false) == "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT]");
    CHECK(format_single("llama2", past, sys, false) == "[INST] You are a helpful assistant\n");
    CHECK(format_single("llama2-sys", past, sys, false) == "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\n");
    CHECK(format_single("mistral", past, sys, false) == "[INST] You are a helpful assistant\n");
    CHECK(format_single("gemma", past, sys, false) == "");
    CHECK(format_single("llama3", past, sys, false) ==
          "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>");
    CHECK(format_single("gigachat", past, sys, false) == "<s>You are a helpful assistant<|message_sep|>");

    past.push_back({"system", "You are a helpful assistant"});
    past.push_back({"user", "Hello"});
    past.push_back({"assistant", "I am assistant"});
    tern_chat_message user = {"user", "How are you"};
    CHECK(format_single("chatml", past, user, true) == "\n<|im_start|>user\nHow are you<|im_end|>\n<|im_start|>assistant\n");
    CHECK(format_single("mistral-v1", past, user, true) == " [INST] How are you [/INST]");
    CHECK(format_single("mistral-v3", past, user, true) == "[INST] How are you[/INST]");
    CHECK(format_single("mistral-v3-tekken", past, user, true) == "[INST]How are you[/INST]");
    CHECK(format_single("mistral-v7", past, user, true) == "[INST] How are you[/INST]");
    CHECK(format_single("llama2", past, user, true) == "[INST] How are you [/INST]");
    CHECK(format_single("mistral", past, user, true) == "[INST] How are you [/INST]");
    CHECK(format_single("gemma", past, user, true) ==
          "\n<start_of_turn>user\nHow are you<end_of_turn>\n<start_of_turn>model\n");
    CHECK(format_single("llama3", past, user, true) ==
          "<|start_header_id|>user<|end_header_id|>\n\nHow are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK(format_single("gigachat", past, user, true) ==
          "user<|role_sep|>How are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>");
}

// Writes stop at `length`; the return value is always the full length.
static void test_bounded_writes(void) {
    const std::string full = apply("chatml", k_conv, k_conv_n, true);
    const int32_t need = (int32_t) full.size();
    CHECK(need > 100);
    CHECK(tern_chat_apply_template("chatml", k_conv, k_conv_n, 1, NULL, 0) == need);
    CHECK(tern_chat_apply_template("chatml", k_conv, k_conv_n, 1, NULL, 1000) == need);  // NULL buf: measure
    const int32_t lengths[] = {0, 1, 7, need - 1, need, need + 1, need + 10};
    for (int32_t len : lengths) {
        std::vector<char> buf((size_t) need + 32, (char) 0x5a);
        char dummy = 0x5a;
        char * p = buf.data();
        int32_t r = tern_chat_apply_template("chatml", k_conv, k_conv_n, 1, len > 0 ? p : &dummy, len);
        CHECK_MSG(r == need, "length %d: returned %d, need %d", len, r, need);
        int32_t copied = len < need ? len : need;
        CHECK_MSG(memcmp(p, full.data(), (size_t) copied) == 0, "length %d: prefix differs", len);
        if (len > need) CHECK_MSG(p[need] == 0, "length %d: no NUL", len);
        size_t untouched_from = (size_t) (len > need ? need + 1 : copied);
        bool untouched = true;
        for (size_t i = untouched_from; i < buf.size(); i++) untouched &= buf[i] == (char) 0x5a;
        CHECK_MSG(untouched, "length %d: wrote past the text / length", len);
        CHECK(dummy == (char) 0x5a);
    }
    // Negative length: nothing written, the length still returned.
    char one = 0x5a;
    CHECK(tern_chat_apply_template("chatml", k_conv, k_conv_n, 1, &one, -5) == need && one == (char) 0x5a);
}

static void test_errors_and_edges(void) {
    char buf[256];
    memset(buf, 0x5a, sizeof(buf));
    // Unknown templates.
    CHECK(tern_chat_apply_template("INVALID TEMPLATE", k_conv, k_conv_n, 1, buf, sizeof(buf)) == -(int32_t) TERN_ERR_UNSUPPORTED);
    CHECK(strstr(tern_last_error(), "INVALID TEMPLATE") != NULL);
    CHECK(tern_chat_apply_template("", k_conv, k_conv_n, 1, buf, sizeof(buf)) == -(int32_t) TERN_ERR_UNSUPPORTED);
    CHECK(tern_chat_apply_template("Chatml", k_conv, k_conv_n, 1, buf, sizeof(buf)) == -(int32_t) TERN_ERR_UNSUPPORTED);
    CHECK(buf[0] == (char) 0x5a);
    // NULL means chatml, as in llama.cpp.
    CHECK(apply(NULL, k_conv, k_conv_n, true) == apply("chatml", k_conv, k_conv_n, true));
    // A name that is no built-in but starts with "mistral": the llama2 family, as in llama.cpp.
    CHECK(name_of("mistral") == "llama2" && name_of("mistral-v2") == "llama2");

    // NULL role or content, NULL messages: an error, nothing written.
    tern_chat_message bad_content[] = {{"system", "s"}, {"user", NULL}};
    tern_chat_message bad_role[] = {{NULL, "x"}};
    const char * names[33];
    CHECK(tern_chat_builtin_templates(names, 33) == 33);
    for (int32_t i = 0; i < 33; i++) {
        CHECK(tern_chat_apply_template(names[i], bad_content, 2, 1, buf, sizeof(buf)) == -(int32_t) TERN_ERR_INVALID_ARG);
        CHECK(tern_chat_apply_template(names[i], bad_role, 1, 0, buf, sizeof(buf)) == -(int32_t) TERN_ERR_INVALID_ARG);
        CHECK(tern_chat_apply_template(names[i], NULL, 3, 1, buf, sizeof(buf)) == -(int32_t) TERN_ERR_INVALID_ARG);
    }
    CHECK(buf[0] == (char) 0x5a);
    CHECK(strstr(tern_last_error(), "NULL") != NULL);

    // Zero messages (msgs may be NULL then): only what the template always writes.
    CHECK(apply("chatml", NULL, 0, true) == "<|im_start|>assistant\n");
    int32_t r = -1;
    CHECK(apply("chatml", NULL, 0, false, &r) == "" && r == 0);
    CHECK(tern_chat_apply_template("chatml", k_conv, 0, 0, buf, sizeof(buf)) == 0 && buf[0] == 0);
    CHECK(apply("llama2", NULL, 0, true) == "[INST] ");
    CHECK(apply("gigachat", NULL, 0, true) == "<s>assistant<|role_sep|>");
    CHECK(apply("chatglm3", NULL, 0, false) == "[gMASK]sop");
    CHECK(apply("llama3", NULL, 0, true) == "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK(apply("minicpm", NULL, 0, true) == "");

    // Quirks kept from llama.cpp: gemma merges the (trimmed) system text into the next
    // user turn; openchat capitalises the role; vicuna drops unknown roles.
    tern_chat_message conv[] = {{"system", "  sys \n"}, {"user", " hi "}, {"tool", "t"}};
    CHECK(apply("gemma", conv, 3, false) ==
          "<start_of_turn>user\nsys\n\nhi<end_of_turn>\n<start_of_turn>tool\nt<end_of_turn>\n");
    CHECK(apply("openchat", conv, 3, true) ==
          "  sys \n<|end_of_turn|>GPT4 Correct User:  hi <|end_of_turn|>GPT4 Correct Tool: t<|end_of_turn|>GPT4 Correct Assistant:");
    CHECK(apply("vicuna", conv, 3, true) == "  sys \n\n\nUSER:  hi \nASSISTANT:");
}

// tern_model_chat_template: the bundled model has none; a copy of its metadata with
// tokenizer.chat_template added hands back that text.
static void test_model_template(void) {
    CHECK(tern_model_chat_template(NULL, NULL, 0) == -1);
    const char * src_dir = getenv("TERN_SOURCE_DIR");
    std::string path = std::string(src_dir ? src_dir : ".") + "/examples/models/stories260K.gguf";
    tern_model_params mp = tern_model_default_params();
    mp.vocab_only = 1;
    tern_model * m = NULL;
    tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
    CHECK_MSG(st == TERN_OK, "%s: %s", path.c_str(), tern_last_error());
    if (st != TERN_OK) return;
    char buf[64];
    CHECK(tern_model_chat_template(m, buf, sizeof(buf)) == -1);

    // The Llama-3 case's template.
    const jinja_case * llama3 = NULL;
    for (const jinja_case & c : k_cases) if (strcmp(c.builtin, "llama3") == 0) llama3 = &c;
    CHECK(llama3 != NULL);
    if (!llama3) { tern_model_free(m); return; }
    const gguf_file * f = &m->files.splits[0];
    std::vector<uint8_t> mem(arena_buffer_size(8u << 20));
    tern_arena arena;
    arena_init(&arena, mem.data(), mem.size());
    gguf_writer w;
    CHECK(gguf_writer_init(&w, &arena, (uint32_t) f->n_kv + 1, 0) == TERN_OK);
    for (uint64_t i = 0; i < f->n_kv; i++) CHECK(gguf_writer_copy_kv(&w, &f->kv[i]) == TERN_OK);
    CHECK(gguf_writer_set_str(&w, "tokenizer.chat_template", llama3->tmpl) == TERN_OK);
    char tmp[] = "/tmp/tern_chat_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK(gguf_writer_write(&w, tmp) == TERN_OK);
    tern_model * m2 = NULL;
    st = tern_model_load_file(tmp, &mp, &m2);
    remove(tmp);
    CHECK_MSG(st == TERN_OK, "%s", tern_last_error());
    if (st == TERN_OK) {
        const int32_t len = (int32_t) strlen(llama3->tmpl);
        CHECK(tern_model_chat_template(m2, NULL, 0) == len);
        std::vector<char> t((size_t) len + 1, (char) 0x5a);
        CHECK(tern_model_chat_template(m2, t.data(), t.size()) == len);
        CHECK(strcmp(t.data(), llama3->tmpl) == 0);
        char small[8];
        CHECK(tern_model_chat_template(m2, small, sizeof(small)) == len);
        CHECK(small[7] == 0 && memcmp(small, llama3->tmpl, 7) == 0);
        CHECK(apply(t.data(), k_conv, k_conv_n, true) == llama3->expected);
        tern_model_free(m2);
    }
    tern_model_free(m);
}

int main(void) {
    test_jinja_cases();
    test_builtin_list();
    test_format_single();
    test_bounded_writes();
    test_errors_and_edges();
    test_model_template();
    return tern_test_summary();
}
